// Composition of the parts that own sockets and background work: runner pool, event hub, tool
// slot, pipeline, engine, spills, terminal bridge. Each part's factory lives in its own folder;
// this file only wires them, starts what must run at start-up, and stops them in order.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Env } from "./env";
import type { Db, DbProvider } from "./db";
import type { Actor, Services } from "./services/types";
import { RunnerPool } from "./executors/runner-pool";
import { createExecutorRouter } from "./executors/router";
import { createEventHub } from "./hub";
import { createTerminalBridge } from "./hub/terminal";
import { ToolRegistry } from "./tools/registry";
import { ToolSessions } from "./tools/sessions";
import { toolActivationStore } from "./services/tool-activations";
import { builtinTools } from "./tools/builtin";
import { retrieveToolResultTool } from "./tools/builtin/retrieve_tool_result";
import { createPipeline } from "./pipeline";
import { createEngine } from "./engine";
import { createSpillStore, startSpillCleanup } from "./services/spills";
import { createPolicyService } from "./services/policies";
import { createFileService } from "./services/files";

export interface PartsDeps {
  env: Env;
  db: Db;
  dbProvider: DbProvider;
  dbUrl: string;
  runnerTokens: string[];
  /** Who a browser connection is (embedded mode: always the local user). */
  actorFor(req: IncomingMessage): Actor | null;
  canUseSession(actor: Actor, sessionId: string): Promise<boolean>;
  log: (line: string) => void;
}

export type PartServices = Omit<Services, "env" | "db" | "dbProvider" | "sessions" | "health">;

export interface Parts {
  services: PartServices;
  upgrades: [string, (req: IncomingMessage, socket: Duplex, head: Buffer) => void][];
  dispose(): Promise<void>;
}

export async function createParts(deps: PartsDeps): Promise<Parts> {
  const { db, log } = deps;
  const runners = new RunnerPool({ tokens: deps.runnerTokens, log });
  const hub = createEventHub(db, { url: deps.dbUrl });
  const publish = (sessionId: string, body: Parameters<typeof hub.publish>[1]) =>
    hub.publish(sessionId, body).catch((err) => log(`event for ${sessionId} not stored: ${(err as Error).message}`));

  const unsubscribe = [
    runners.onStatus((e) => {
      for (const id of e.sessionIds) void publish(id, { type: "runner.status", connected: e.connected, runnerId: e.runnerId, sandboxed: e.sandboxed });
    }),
    runners.onFilesChanged((e) => {
      for (const id of e.sessionIds) void publish(id, { type: "files.changed", paths: e.paths, version: e.version });
    }),
  ];

  const registry = new ToolRegistry([...builtinTools(), retrieveToolResultTool]);
  for (const p of registry.problems()) log(`tool ${p.name} is fail-closed: ${p.reason}`);
  const tools = new ToolSessions(registry, {
    ...toolActivationStore(db),
    onSaveError: (sessionId, err) => log(`tool activations of ${sessionId} not saved: ${(err as Error).message}`),
  });

  const spills = createSpillStore(db, deps.dbUrl);
  const spillCleanup = startSpillCleanup(spills, { log: (m, e) => log(`${m}${e ? `: ${(e as Error).message}` : ""}`) });
  const policies = createPolicyService(db);

  const pipeline = createPipeline({
    db,
    provider: deps.dbProvider,
    tools,
    executors: createExecutorRouter({ runner: runners }),
    policies,
    spills,
    emit: (sessionId, event) => publish(sessionId, event).then(() => undefined),
    onSettled: ({ sessionId, toolCallId }) => log(`call ${toolCallId} of session ${sessionId} settled after its turn ended`),
  });

  const engine = createEngine({
    db,
    hub,
    dispatcher: pipeline,
    catalog: { catalog: async (sessionId) => (await tools.load(sessionId)).entries() },
    env: deps.env,
    log: (m, e) => log(`engine: ${m}${e ? `: ${(e as Error).message ?? e}` : ""}`),
  });
  // A previous process may have stopped mid-turn: its turns become interrupted, its calls
  // are settled by the pipeline (pending approvals stay answerable).
  const interrupted = await engine.recoverInterrupted();
  const recovered = await pipeline.recover();
  if (interrupted || recovered.interrupted || recovered.settled) {
    log(`recovered ${interrupted} interrupted turn(s), ${recovered.interrupted} cut-off call(s), ${recovered.settled} settled approval(s)`);
  }

  const terminal = createTerminalBridge({
    pty: runners.pty,
    authorize: async (req, sessionId) => {
      const actor = deps.actorFor(req);
      return actor !== null && (await deps.canUseSession(actor, sessionId));
    },
    log,
  });

  return {
    services: { runners, hub, engine, approvals: pipeline, policies, spills, files: createFileService(runners) },
    upgrades: [
      ["/runner", (req, socket, head) => runners.handleUpgrade(req, socket, head)],
      [terminal.path, (req, socket, head) => terminal.handleUpgrade(req, socket, head)],
    ],
    dispose: async () => {
      for (const stop of unsubscribe) stop();
      spillCleanup.stop();
      // The pipeline lets go first so the engine's interruption is not read as a person's cancel.
      pipeline.dispose();
      await engine.dispose();
      terminal.dispose();
      await runners.dispose();
      await hub.dispose();
      await spills.close();
    },
  };
}
