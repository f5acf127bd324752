// Composition of the parts that own sockets and background work: runner pool, event hub, tool
// slot, pipeline, engine, spills, terminal bridge. Each part's factory lives in its own folder;
// this file only wires them, starts what must run at start-up, and stops them in order.
import { join } from "node:path";
import { runnerKeyStore } from "./executors/runner/key-store";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Env } from "./env";
import type { Db, DbProvider, TurnRows } from "./db";
import type { Actor, Services } from "./services/types";
import { RunnerPool, type BoundToken } from "./executors/runner-pool";
import { createExecutorRouter } from "./executors/router";
import { createEventHub, type EventHub } from "./hub";
import { createSessionHistory } from "./hub/history";
import { createCluster, type Cluster } from "./hub/cluster";
import { clusterCommands } from "./hub/commands";
import { createSharedHub } from "./hub/shared";
import { createTerminalBridge } from "./hub/terminal";
import { ToolRegistry } from "./tools/registry";
import { ToolSessions } from "./tools/sessions";
import { policyCatalog } from "./tools/policy-catalog";
import { CheckCatalog } from "./tools/checks-catalog";
import { toolActivationStore } from "./services/tool-activations";
import { builtinTools } from "./tools/builtin";
import { startMcp } from "./tools/mcp";
import { retrieveToolResultTool } from "./tools/builtin/retrieve_tool_result";
import { createPipeline } from "./pipeline";
import { createEngine } from "./engine";
import { recoverClaimedTurns } from "./engine/recovery";
import { createSpillStore, startSpillCleanup } from "./services/spills";
import { createPolicyService } from "./services/policies";
import { createFileService } from "./services/files";
import { gitServicesOf, gitToolService } from "./services/git-remote-services";
import { GIT_REMOTE_OP } from "./protocol/git-remote";
import { randomUUID } from "node:crypto";
import { createRunnerRegistry, RUNNER_TOUCH_MS } from "./services/runners";
import { createPlacement } from "./services/placement";
import { createProjectService, workspaceSourceOf } from "./services/projects";
import { createRunnerChores, type RunnerChores } from "./services/runner-chores";
import { createCheckpointService } from "./services/checkpoints";
import { checkpointingHub, checkpointingPicker } from "./services/checkpoint-hooks";
import { createRewindService } from "./services/rewind";
import { startStoppedRecovery } from "./services/stopped-recovery";
import { diskLimitOf } from "./services/uploads-limits";
import type { Uploads } from "./services/uploads";

export interface PartsDeps {
  env: Env;
  db: Db;
  /** The turn's hot-path rows (DbHandle.rows). */
  rows: TurnRows;
  dbProvider: DbProvider;
  dbUrl: string;
  /** Runner tokens; the local runner's and QUIVER_RUNNER_TOKENS' are bound to their ids (executors/runner/identity.ts). */
  runnerTokens: Array<string | BoundToken>;
  /** Who a browser connection is (embedded mode: always the local user). */
  actorFor(req: IncomingMessage): Actor | null;
  canUseSession(actor: Actor, sessionId: string): Promise<boolean>;
  log: (line: string) => void;
  /** The local owner: their workspace of the Default project is the local runner's own folder. */
  localOwner?: { userId: string; orgId: string };
  /** Archive uploads: a project is made only from its creator's own (services/uploads.ts). */
  uploads?: Pick<Uploads, "claim" | "keep" | "release" | "kept">;
  /** Several instances on PostgreSQL: heartbeat, lease and idle times (tests shorten them). */
  cluster?: { heartbeatMs?: number; ttlMs?: number; idleMs?: number };
}

export type PartServices = Omit<
  Services,
  "env" | "db" | "dbProvider" | "sessions" | "shares" | "health" | "orgs" | "sso"
>;

export interface Parts {
  services: PartServices;
  /** What runners owe for deleted sessions and projects (services/runner-chores.ts). */
  chores: RunnerChores;
  upgrades: [string, (req: IncomingMessage, socket: Duplex, head: Buffer) => void][];
  /** This instance among others on a PostgreSQL database (none on SQLite). */
  cluster?: Cluster;
  dispose(): Promise<void>;
}

export async function createParts(deps: PartsDeps): Promise<Parts> {
  const { db, log } = deps;
  // A shared-token runner's id is bound to its key on first use (executors/runner/handshake.ts).
  const runners = new RunnerPool({ tokens: deps.runnerTokens, keys: runnerKeyStore(db, deps.dbProvider), log });
  // On PostgreSQL this instance shares sessions with any others on the database (hub/shared.ts);
  // a SQLite file has one server.
  const cluster =
    deps.dbProvider === "postgresql"
      ? createCluster({
          url: deps.dbUrl,
          ...deps.cluster,
          log: (m, e) => log(`cluster: ${m}${e ? `: ${(e as Error).message ?? e}` : ""}`),
        })
      : undefined;
  const shared =
    cluster && createSharedHub(db, cluster, { url: deps.dbUrl, idleMs: deps.cluster?.idleMs, pages: deps.rows });
  const hub: EventHub = shared ?? createEventHub(db, { url: deps.dbUrl, pages: deps.rows });
  const commands = cluster && clusterCommands(cluster);
  const publish = (sessionId: string, body: Parameters<typeof hub.publish>[1]) =>
    hub.publish(sessionId, body).catch((err) => log(`event for ${sessionId} not stored: ${(err as Error).message}`));

  // Runners and workspaces in the database (services/runners.ts, placement.ts, projects.ts): where
  // each session works is looked up there, never chosen by whichever runner is connected.
  const runnerRegistry = createRunnerRegistry(db, { instanceId: cluster?.id ?? `local-${randomUUID()}`, log });
  if (!cluster) await runnerRegistry.forgetConnections();
  const placement = createPlacement(db, {
    ops: runners,
    // A git project's workspace: made empty, then cloned with its person's stored credential (services/git-remote.ts).
    fillers: {
      git: async (ws, source) => {
        if (source.kind !== "git") throw new Error("not a git source");
        const input = await gitServicesOf({ db, env: deps.env, runners }).remote.cloneInput(
          ws.userId,
          source.url,
          source.branch,
        );
        return runners.runOn(ws.runnerId!, GIT_REMOTE_OP, { ...input, making: true }, 600_000, ws.id);
      },
    },
    sourceOf: async (projectId) => workspaceSourceOf(await db.project.findUniqueOrThrow({ where: { id: projectId } })),
    limitOf: async (projectId) =>
      (
        await diskLimitOf(
          db,
          (await db.project.findUniqueOrThrow({ where: { id: projectId }, select: { orgId: true } })).orgId,
        )
      ).limitBytes,
    log,
  });
  const uploads = deps.uploads;
  const projects = createProjectService(db, {
    placement,
    ops: runners,
    localOwner: deps.localOwner,
    onWorkspaceRemoved: (id) => runners.forgetWorkspace(id),
    beforeSessionsRemoved: (ids) => Promise.all(ids.map((id) => hub.written(id))),
    dbProvider: deps.dbProvider,
    log,
    instanceId: cluster?.id,
    ...(uploads ? { claimUpload: (id: string, actor: Actor) => uploads.claim(id, actor), keptUploads: uploads } : {}),
  });
  const chores = createRunnerChores(db, runners, log);
  // Runner facts in order per runner: a quick reconnect's hello is written after the close before it.
  let runnerFacts = Promise.resolve();
  const preparing = new Set<Promise<void>>();
  runners.setLocator(async (sessionId) => {
    const workspaceId = await projects.workspaceOfSession(sessionId);
    if (!workspaceId) return undefined;
    // A runner this pool already holds is placeable only once its hello is recorded: a session
    // asking in that moment (the first page load after a start) waits for it, not fails.
    await runnerFacts;
    return placement.locate(workspaceId);
  });
  runners.pty.whyUnavailable = (sessionId) => runners.unavailableReason(sessionId);
  // A runner that connects is matched to the sessions of its ready workspaces at once, so their
  // previews and change events reach them before any call of theirs asks where they are.
  async function bindSessionsOf(runnerId: string): Promise<void> {
    const rows = await db.session.findMany({
      where: { workspaceRef: { runnerId, state: "ready" } },
      select: { id: true, workspaceRef: { select: { id: true, runnerDefault: true } } },
      take: 10_000,
    });
    for (const r of rows)
      if (r.workspaceRef) runners.bind(r.id, runnerId, r.workspaceRef.runnerDefault ? undefined : r.workspaceRef.id);
  }
  const registryLog = (what: string) => (err: unknown) => log(`runners: ${what}: ${(err as Error).message}`);
  const touchTimer = setInterval(() => {
    const live = runners
      .status()
      .filter((r) => r.connected)
      .map((r) => r.id);
    void runnerRegistry
      .touch(live)
      .then(() => placement.placeWaiting())
      .then(() => placement.createPending(live))
      .then(() => placement.syncLimits(live))
      .then(() => chores.runFor(live))
      .catch(registryLog("renewal failed"));
  }, RUNNER_TOUCH_MS);
  touchTimer.unref();

  const unsubscribe = [
    runners.onStatus((e) => {
      const recorded = runnerFacts.then(() =>
        e.connected ? runnerRegistry.connected(e.hello) : runnerRegistry.disconnected(e.runnerId, new Date(e.at)),
      );
      runnerFacts = recorded.catch(registryLog(`runner ${e.runnerId} not recorded`));
      // Off the facts' chain: a workspace's clone here must not hold the next runner's hello.
      if (e.connected) {
        const prepared = recorded.then(
          () =>
            placement
              .placeWaiting()
              .then(() => placement.createPending([e.runnerId]))
              .then(() => bindSessionsOf(e.runnerId))
              .then(() => placement.syncLimits([e.runnerId], { fresh: true }))
              .catch(registryLog(`runner ${e.runnerId}'s workspaces not prepared`)),
          () => {}, // logged as not recorded
        );
        // Beside it, not in it: a slow prune of a deleted session's checkpoints must not hold the rest.
        const owed = recorded.then(
          () => chores.runFor([e.runnerId]),
          () => {},
        );
        preparing.add(owed);
        void owed.finally(() => preparing.delete(owed));
        preparing.add(prepared);
        void prepared.finally(() => preparing.delete(prepared));
      }
      for (const id of e.sessionIds)
        void publish(id, {
          type: "runner.status",
          connected: e.connected,
          runnerId: e.runnerId,
          sandboxed: e.sandboxed,
        });
    }),
    runners.onFilesChanged((e) => {
      for (const id of e.sessionIds) void publish(id, { type: "files.changed", paths: e.paths, version: e.version });
    }),
  ];

  const registry = new ToolRegistry([...builtinTools(), retrieveToolResultTool]);
  // MCP servers start in parallel, each with a deadline; one that fails is logged and left out.
  const mcp = await startMcp({
    configPath: deps.env.QUIVER_MCP_CONFIG,
    registry,
    log,
    // The local runner's workspaces (app.ts starts it on these); the rest of the data folder is hidden from commands.
    agentFolders: [deps.env.workspaceDir, join(deps.env.dataDir, "workspaces")],
  });
  for (const p of registry.problems()) log(`tool ${p.name} is fail-closed: ${p.reason}`);
  const tools = new ToolSessions(registry, {
    ...toolActivationStore(db, deps.dbProvider),
    onSaveError: (sessionId, err) => log(`tool activations of ${sessionId} not saved: ${(err as Error).message}`),
  });

  // run_check's per-session entry: the workspace's declared checks, read through its runner (tools/checks-catalog.ts).
  const checkCatalog = new CheckCatalog({
    runner: runners,
    version: (sessionId) => runners.workspaceVersion(sessionId),
  });

  const spills = createSpillStore(db, deps.dbUrl, {
    sessionBytes: deps.env.QUIVER_OUTPUT_SESSION_BYTES,
    dataDir: deps.env.dataDir,
    minFreeMb: deps.env.QUIVER_MIN_FREE_DISK_MB,
  });
  const spillCleanup = startSpillCleanup(spills, { log: (m, e) => log(`${m}${e ? `: ${(e as Error).message}` : ""}`) });
  const policies = createPolicyService(db);

  // Checkpoints of the workspaces (issue 27): taken around turns, kept by the runners and in the database.
  const checkpoints = createCheckpointService({
    db,
    runner: runners,
    publish: (sessionId, body) => publish(sessionId, body),
    isRunning: (sessionId) => engine.isRunning(sessionId),
    log: (m) => log(`checkpoints: ${m}`),
    instanceId: cluster?.id,
  });
  const rewinds = createRewindService({ db, checkpoints, publish: (sessionId, body) => publish(sessionId, body) });
  const stopped = startStoppedRecovery({
    db,
    publish: (sessionId, body) => publish(sessionId, body),
    rewinds,
    cluster,
    log,
  });

  const pipeline = createPipeline(
    {
      db,
      rows: deps.rows,
      provider: deps.dbProvider,
      tools,
      // A turn's first change is preceded by a checkpoint of the workspace (services/checkpoint-hooks.ts).
      executors: checkpointingPicker(createExecutorRouter({ runner: runners }), checkpoints),
      policies,
      spills,
      workspaceVersion: (sessionId) => runners.workspaceVersion(sessionId),
      // git_push: the session's remote and a push with its owner's credential (services/git-remote-services.ts).
      toolServices: (sessionId) => ({
        git: gitToolService(gitServicesOf({ db, env: deps.env, runners }), db, sessionId),
      }),
      limits: { outputCeiling: deps.env.QUIVER_OUTPUT_CEILING_BYTES },
      emit: (sessionId, event) => publish(sessionId, event).then(() => undefined),
      onSettled: ({ sessionId, toolCallId }) =>
        log(`call ${toolCallId} of session ${sessionId} settled after its turn ended`),
    },
    commands,
  );

  const engine = createEngine({
    db,
    // The reads before each model request through plain SQL, not Prisma's compiler (engine.ts).
    dbProvider: deps.dbProvider,
    rows: deps.rows,
    // Its turn.started and turn.finished also tell the checkpoints (an `after` per changing turn).
    hub: checkpointingHub(hub, checkpoints, (m) => log(`checkpoints: ${m}`)),
    dispatcher: pipeline,
    // Less the tools the org's policy denies outright (tools/policy-catalog.ts).
    catalog: {
      catalog: async (sessionId, model) => {
        const state = await tools.load(sessionId, model);
        const session = await db.session.findUnique({ where: { id: sessionId }, select: { orgId: true } });
        const entries = session ? policyCatalog(state, await policies.load(session.orgId)) : state.entries();
        // run_check's entry is the session's own (its checks, their latest runs), rebuilt at most once a turn.
        const turn = await db.turn.findFirst({
          where: { sessionId, status: "running" },
          orderBy: { startedAt: "desc" },
          select: { id: true },
        });
        return checkCatalog.patch(sessionId, entries, turn?.id);
      },
    },
    env: deps.env,
    cluster: cluster && commands && { instanceId: cluster.id, cancelElsewhere: commands.cancelElsewhere },
    log: (m, e) => log(`engine: ${m}${e ? `: ${(e as Error).message ?? e}` : ""}`),
  });
  // Turns left running by a stopped process (or, with peers, by a gone instance: only those this
  // instance claimed), with their calls (a waiting card cancelled, a running call "may have partly
  // run": pipeline/interrupted.ts), then calls the pipeline still holds of turns no longer running.
  async function recoverTurns(): Promise<void> {
    const interrupted = commands
      ? await recoverClaimedTurns(
          db,
          hub,
          (m, e) => log(`engine: ${m}${e ? `: ${(e as Error).message ?? e}` : ""}`),
          await commands.claimOrphanedTurns(),
        )
      : await engine.recoverInterrupted();
    const recovered = await pipeline.recover();
    if (interrupted || recovered.interrupted || recovered.settled) {
      log(
        `recovered ${interrupted} interrupted turn(s), ${recovered.interrupted} cut-off call(s), ${recovered.settled} settled approval(s)`,
      );
    }
  }
  async function stopAll(terminal?: { dispose(): void }) {
    for (const stop of unsubscribe) stop();
    clearInterval(touchTimer);
    spillCleanup.stop();
    await stopped.dispose();
    // The pipeline lets go first so the engine's interruption is not read as a person's cancel.
    pipeline.dispose();
    await engine.dispose();
    await mcp.dispose();
    terminal?.dispose();
    await runners.dispose();
    // The runners' goodbyes are written before the database is let go (their connections are
    // closed by now, so what was being prepared on them ends soon).
    await runnerFacts;
    await Promise.all(preparing);
    await hub.dispose();
    await cluster?.dispose();
    await spills.close();
  }
  if (cluster && shared && commands) {
    // Listening and known to the others before recovery, which leaves live instances' turns alone.
    // A database that refuses us fails the start: nothing this function opened stays open.
    try {
      await cluster.start({
        events: (msg) => shared.deliver(msg.events),
        request: async (msg) => {
          if (msg.type === "publish") return shared.handlePublish(msg);
          // As turns.cancel does here: stop the turn, then its cards and early runs.
          const cancelled = engine.isRunning(msg.sessionId) && (await engine.cancel(msg.sessionId));
          await pipeline.cancelSession(msg.sessionId);
          return { ok: true, value: cancelled };
        },
        approvalAnswered: (approvalId) => pipeline.wakeApproval(approvalId),
        welcome: (to) => shared.welcome(to),
        resync: () => shared.resync(),
        heartbeat: async () => {
          const lost = await commands.takenOver(engine.runningTurns());
          if (lost.length > 0)
            log(
              `engine: stopped ${engine.abandon(lost)} turn(s) that other instance(s) took over while this one was stalled`,
            );
        },
        peersGone: async (ids) => {
          await recoverTurns();
          await stopped.peersGone(ids);
          const freed = await shared.freeLeasesOf(ids);
          if (freed) log(`freed ${freed} session lease(s) of gone instance(s) ${ids.join(", ")}`);
        },
      });
    } catch (err) {
      await stopAll();
      throw err;
    }
  }
  // A previous process may have stopped mid-turn.
  await recoverTurns();
  // Restores and rewinds a stopped process committed without their events (stopped-recovery.ts).
  try {
    const told = await stopped.atStart();
    if (told) log(`announced ${told} restore(s) or rewind(s) a stopped server left unannounced`);
  } catch (err) {
    log(`restores and rewinds left unannounced could not be recovered: ${(err as Error).message}`);
  }
  // The local owner's Default project and workspace, and their sessions from before projects in it.
  await projects.ensureLocal();
  await projects.releaseOrphanUploads();

  const terminal = createTerminalBridge({
    pty: runners.pty,
    idleMs: deps.env.QUIVER_TERMINAL_IDLE_MINUTES * 60_000,
    authorize: async (req, sessionId) => {
      const actor = deps.actorFor(req);
      if (actor === null || !(await deps.canUseSession(actor, sessionId))) return false;
      // The terminal opens synchronously on the session's runner: its place is found now.
      await runners.place(sessionId).catch(() => undefined);
      return true;
    },
    log,
  });

  return {
    services: {
      runners,
      runnerRegistry,
      placement,
      projects,
      hub,
      history: createSessionHistory(db, deps.rows),
      engine,
      approvals: pipeline,
      policies,
      spills,
      files: createFileService(runners),
      attachments: deps.rows,
      checkpoints,
      rewinds,
    },
    chores,
    upgrades: [
      ["/runner", (req, socket, head) => runners.handleUpgrade(req, socket, head)],
      [terminal.path, (req, socket, head) => terminal.handleUpgrade(req, socket, head)],
    ],
    cluster,
    dispose: () => stopAll(terminal),
  };
}
