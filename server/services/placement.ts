// Placement: which runner holds a person's workspace of a project, decided once and stored in
// the database, so every server instance and every restart agrees. A new workspace goes to a
// live runner (services/runners.ts) that declares every label the project asks for and has room
// (workspaces held below its capacity), the least loaded first, then the one with the most free
// disk. Two instances placing the same (project, person) at once meet at the database's unique
// constraint: the loser reads the winner's row. The runner is then asked to create the folder
// (workspace.create); a create that could not be sent now is sent by whichever instance holds the
// runner when it (re)connects or at its next renewal.
import { randomBytes } from "node:crypto";
import type { Db } from "../db";
import { ExecutorUnavailableError, type ExecResult } from "../executors/contract";
import type { SessionPlace } from "../executors/runner-pool";
import { WORKSPACE_CREATE_OP, WORKSPACE_LIMIT_OP, type WorkspaceSource } from "../protocol/workspace-ops";
import { isLive, labelsOf } from "./runners";
import { DEFAULT_DISK_LIMIT_MB } from "./uploads-limits";

/** What placement needs of the runner pool of this instance. */
export interface RunnerOps {
  isLive(runnerId: string): boolean;
  runOn(runnerId: string, op: string, input: unknown, timeoutMs?: number, workspaceId?: string): Promise<ExecResult>;
}

/** Fills a freshly made (empty) workspace from a source the runner has no filler for (git: the
 *  person's credential travels only in this call); its failure is the workspace's error. */
export type Filler = (ws: WorkspaceRow, source: WorkspaceSource) => Promise<ExecResult>;

export interface WorkspaceRow {
  id: string;
  projectId: string;
  userId: string;
  runnerId: string | null;
  runnerDefault: boolean;
  state: string;
  error: string | null;
}

/** Where a project's files come from, as the runner's workspace.create takes it. */
export type SourceOf = (projectId: string) => Promise<WorkspaceSource>;

export function newWorkspaceId(): string {
  return `w-${randomBytes(10).toString("hex")}`;
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string })?.code === "P2002";
}

/** A failed create is tried again at most this often (a wrong git URL is not cloned per call). */
const RETRY_FAILED_MS = 30_000;
/** Waiting workspaces placed per connect or renewal: the rest go in the rounds after. */
const PLACE_PER_ROUND = 200;

/** The disk limit (bytes) of a project's workspaces: its org's (services/uploads-limits.ts). */
export type LimitOf = (projectId: string) => Promise<number | undefined>;

export interface PlacementDeps {
  ops: RunnerOps;
  sourceOf: SourceOf;
  limitOf?: LimitOf;
  fillers?: Partial<Record<WorkspaceSource["kind"], Filler>>;
  log?: (line: string) => void;
}

export function createPlacement(db: Db, deps: PlacementDeps) {
  const log = deps.log ?? (() => {});
  const limits = createLimitSync(db, deps.ops, log);
  const lastTried = new Map<string, number>();
  const creating = new Map<string, Promise<WorkspaceRow>>();

  /** The runner a new workspace goes to, or undefined when no live runner fits. */
  async function choose(want: { labels: string[]; runnerDefault: boolean }): Promise<string | undefined> {
    const now = Date.now();
    const rows = (await db.runnerNode.findMany({ where: { instanceId: { not: null } } })).filter((r) => isLive(r, now));
    const fits = rows.filter(
      (r) =>
        (want.runnerDefault ? r.servesDefault : r.root) && want.labels.every((l) => labelsOf(r.labels).includes(l)),
    );
    if (fits.length === 0) return undefined;
    const counts = await db.workspace.groupBy({
      by: ["runnerId"],
      where: { runnerId: { in: fits.map((r) => r.id) }, runnerDefault: false },
      _count: { _all: true },
    });
    const held = new Map(counts.map((c) => [c.runnerId, c._count._all]));
    const room = fits
      .map((r) => ({
        id: r.id,
        held: held.get(r.id) ?? 0,
        capacity: r.capacity,
        free: r.freeDiskBytes === null ? -1 : Number(r.freeDiskBytes),
      }))
      // The default folder is the runner's own; it takes no place among the workspaces it holds.
      .filter((r) => want.runnerDefault || r.capacity <= 0 || r.held < r.capacity);
    room.sort((a, b) => load(a) - load(b) || b.free - a.free || a.id.localeCompare(b.id));
    return room[0]?.id;
  }

  const load = (r: { held: number; capacity: number }) => (r.capacity > 0 ? r.held / r.capacity : r.held);

  /** Asks the runner for the workspace's folder when it is still to be made and this instance holds its runner. */
  async function prepare(ws: WorkspaceRow): Promise<WorkspaceRow> {
    if (
      ws.runnerDefault ||
      ws.state === "ready" ||
      ws.state === "deleting" ||
      !ws.runnerId ||
      !deps.ops.isLive(ws.runnerId)
    )
      return ws;
    if (ws.state === "failed" && Date.now() - (lastTried.get(ws.id) ?? 0) < RETRY_FAILED_MS) return ws;
    const pending = creating.get(ws.id);
    if (pending) return pending;
    const runnerId = ws.runnerId;
    const job = (async () => {
      lastTried.set(ws.id, Date.now());
      let result: ExecResult;
      let ok: boolean;
      try {
        const source = await deps.sourceOf(ws.projectId);
        const filler = deps.fillers?.[source.kind];
        const diskLimitBytes = await deps.limitOf?.(ws.projectId);
        result = await deps.ops.runOn(runnerId, WORKSPACE_CREATE_OP, {
          workspaceId: ws.id,
          source: filler ? { kind: "empty" } : source,
          ...(diskLimitBytes ? { diskLimitBytes } : {}),
        });
        if (result.ok && diskLimitBytes) limits.sent(ws.id, diskLimitBytes);
        // A folder that is there already (a create whose answer was lost) is the workspace.
        ok = result.ok || /exist/i.test(result.output);
        if (ok && filler) {
          result = await filler(ws, source);
          ok = result.ok;
        }
      } catch {
        return ws; // the runner went away meanwhile: it is created when it is back
      }
      const data = ok ? { state: "ready", error: null } : { state: "failed", error: result.output.slice(0, 2000) };
      await db.workspace.updateMany({ where: { id: ws.id, state: { in: ["creating", "failed"] } }, data });
      if (!ok) log(`workspace ${ws.id} on ${runnerId} could not be created: ${result.output}`);
      return { ...ws, ...data };
    })().finally(() => creating.delete(ws.id));
    creating.set(ws.id, job);
    return job;
  }

  return {
    choose,
    prepare,
    /** Sends each ready workspace on these runners (held here) its org's limit when it differs from the last one sent. */
    syncLimits: (runnerIds: string[], options?: { fresh?: boolean }) => limits.sync(runnerIds, options),

    /** The person's workspace of the project: found, or placed now (once, whichever instance asks). */
    async ensureWorkspace(
      projectId: string,
      userId: string,
      options: { runnerDefault?: boolean } = {},
    ): Promise<WorkspaceRow> {
      const existing = await db.workspace.findUnique({ where: { projectId_userId: { projectId, userId } } });
      if (existing) return existing.runnerId ? existing : this.placeUnplaced(existing);
      const project = await db.project.findUniqueOrThrow({ where: { id: projectId }, select: { runnerLabels: true } });
      const runnerDefault = options.runnerDefault ?? false;
      const runnerId = await choose({ labels: labelsOf(project.runnerLabels), runnerDefault });
      try {
        return await db.workspace.create({
          data: {
            id: newWorkspaceId(),
            projectId,
            userId,
            runnerId: runnerId ?? null,
            runnerDefault,
            state: runnerDefault ? "ready" : "creating",
          },
        });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        return db.workspace.findUniqueOrThrow({ where: { projectId_userId: { projectId, userId } } });
      }
    },

    /** A workspace made while no runner fitted gets one now, if one fits (compare-and-set). */
    async placeUnplaced(ws: WorkspaceRow): Promise<WorkspaceRow> {
      const project = await db.project.findUniqueOrThrow({
        where: { id: ws.projectId },
        select: { runnerLabels: true },
      });
      const runnerId = await choose({ labels: labelsOf(project.runnerLabels), runnerDefault: ws.runnerDefault });
      if (runnerId) await db.workspace.updateMany({ where: { id: ws.id, runnerId: null }, data: { runnerId } });
      return db.workspace.findUniqueOrThrow({ where: { id: ws.id } });
    },

    /**
     * Workspaces made while no live runner fitted (the local owner's before the local runner
     * connected, a project whose labelled runners were full) are placed once one is, not only
     * when a session of theirs next asks: the home page then says where each one is.
     */
    async placeWaiting(): Promise<void> {
      const waiting = await db.workspace.findMany({
        where: { runnerId: null, state: { not: "deleting" } },
        orderBy: { createdAt: "asc" },
        take: PLACE_PER_ROUND,
      });
      for (const ws of waiting) await this.placeUnplaced(ws);
    },

    /** Where a session works; made ready on the way. Throws (with the reason) when it cannot work now. */
    async locate(workspaceId: string): Promise<SessionPlace> {
      const found = await db.workspace.findUnique({ where: { id: workspaceId } });
      if (!found) throw new ExecutorUnavailableError("this session's workspace was deleted (its project is gone)");
      let ws: WorkspaceRow = found.runnerId ? found : await this.placeUnplaced(found);
      const runnerId = ws.runnerId;
      if (!runnerId)
        throw new ExecutorUnavailableError(
          "no connected runner can hold this session's workspace (none is live with room and the labels its project asks for); it is placed as soon as one is",
        );
      ws = await prepare(ws);
      if (ws.state === "failed")
        throw new ExecutorUnavailableError(
          `this session's workspace could not be created on runner ${runnerId}: ${ws.error ?? "unknown error"}`,
        );
      if (ws.state === "deleting") throw new ExecutorUnavailableError("this session's workspace is being deleted");
      const runner = await db.runnerNode.findUnique({ where: { id: runnerId } });
      const goneSince =
        runner && !isLive(runner) ? (runner.disconnectedAt ?? runner.lastSeenAt).toISOString() : undefined;
      return { runnerId, ...(ws.runnerDefault ? {} : { workspaceId: ws.id }), ...(goneSince ? { goneSince } : {}) };
    },

    /** Creates every workspace placed on these runners (held here) that is still to be made. */
    async createPending(runnerIds: string[]): Promise<void> {
      if (runnerIds.length === 0) return;
      const pending = await db.workspace.findMany({
        where: { runnerId: { in: runnerIds }, state: "creating", runnerDefault: false },
      });
      for (const ws of pending) await prepare(ws);
    },
  };
}

/**
 * The org's disk limit reaching the runners (workspace.limit): the runner keeps a workspace's
 * limit across its restarts, so this instance sends one only when it differs from what it last
 * sent there, and everything again to a runner that (re)connects (`fresh`). Run on each renewal,
 * an admin's change reaches runners held by any instance within RUNNER_TOUCH_MS.
 */
function createLimitSync(db: Db, ops: RunnerOps, log: (line: string) => void) {
  const lastSent = new Map<string, number>();
  let running = Promise.resolve();
  async function sync(runnerIds: string[], options: { fresh?: boolean } = {}): Promise<void> {
    const held = runnerIds.filter((id) => ops.isLive(id));
    if (held.length === 0) return;
    const rows = await db.workspace.findMany({
      where: { runnerId: { in: held }, runnerDefault: false, state: "ready" },
      select: { id: true, runnerId: true, project: { select: { orgId: true } } },
    });
    const orgs = await db.org.findMany({
      where: { id: { in: [...new Set(rows.map((w) => w.project.orgId))] } },
      select: { id: true, diskLimitMb: true },
    });
    const mbOf = new Map(orgs.map((o) => [o.id, o.diskLimitMb]));
    for (const ws of rows) {
      const want = (mbOf.get(ws.project.orgId) ?? DEFAULT_DISK_LIMIT_MB) * 1024 ** 2;
      if (!options.fresh && lastSent.get(ws.id) === want) continue;
      try {
        const r = await ops.runOn(ws.runnerId!, WORKSPACE_LIMIT_OP, { workspaceId: ws.id, diskLimitBytes: want });
        if (r.ok) lastSent.set(ws.id, want);
        else log(`workspace ${ws.id}: its disk limit was not set on ${ws.runnerId}: ${r.output}`);
      } catch (err) {
        log(`workspace ${ws.id}: its disk limit was not sent to ${ws.runnerId}: ${(err as Error).message}`);
      }
    }
  }
  return {
    sent: (workspaceId: string, bytes: number) => void lastSent.set(workspaceId, bytes),
    // One sync at a time: a renewal and an admin's change never send the same op twice at once.
    sync: (runnerIds: string[], options?: { fresh?: boolean }) =>
      (running = running
        .then(() => sync(runnerIds, options))
        .catch((err) => log(`disk limits not synced: ${(err as Error).message}`))),
  };
}

export type Placement = ReturnType<typeof createPlacement>;
