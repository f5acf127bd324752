// The runner registry in the database: every runner that said hello, with its labels, capacity
// and free disk, which server instance holds its connection and since when it is gone. Placement
// (services/placement.ts) chooses among the live ones, so every server instance sees the same
// runners; the admin page and /api/health list them with their workspaces. A runner counts as
// live while the instance holding it renews `lastSeenAt` (a crashed instance's runners go stale).
import type { Db } from "../db";
import type { RunnerHello } from "../protocol/runner";

/** How often an instance renews its runners' lastSeenAt, and when a silent one counts as gone. */
export const RUNNER_TOUCH_MS = 10_000;
export const RUNNER_STALE_MS = 45_000;

export interface RunnerRow {
  id: string;
  labels: string[];
  capacity: number;
  freeDiskBytes: number | null;
  root: boolean;
  live: boolean;
  instanceId: string | null;
  connectedAt: string | null;
  disconnectedAt: string | null;
  lastSeenAt: string;
  /** Workspaces placed on it (database). */
  workspaces: number;
}

interface NodeRow {
  id: string;
  labels: unknown;
  capacity: number;
  freeDiskBytes: bigint | null;
  root: boolean;
  instanceId: string | null;
  connectedAt: Date | null;
  disconnectedAt: Date | null;
  lastSeenAt: Date;
}

export function isLive(row: Pick<NodeRow, "instanceId" | "lastSeenAt">, now = Date.now()): boolean {
  return row.instanceId !== null && now - row.lastSeenAt.getTime() < RUNNER_STALE_MS;
}

export function labelsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((l): l is string => typeof l === "string") : [];
}

export function createRunnerRegistry(db: Db, options: { instanceId: string; log?: (line: string) => void }) {
  const log = options.log ?? (() => {});
  const { instanceId } = options;

  return {
    instanceId,

    /** A runner said hello to this instance: its facts, and that this instance holds it now. A
     *  `--root` runner's hello lists its workspaces: those placed on it and still being created
     *  are there after all (a create whose answer was lost to a restart). */
    async connected(hello: RunnerHello): Promise<void> {
      const now = new Date();
      const facts = {
        labels: hello.labels ?? [],
        capacity: hello.capacity ?? 0,
        freeDiskBytes: hello.freeDiskBytes !== undefined ? BigInt(hello.freeDiskBytes) : null,
        root: hello.root ?? false,
        servesDefault: !hello.root || (hello.workspaces ?? []).some((w) => w.default),
        instanceId,
        connectedAt: now,
        disconnectedAt: null,
        lastSeenAt: now,
      };
      await db.runnerNode.upsert({
        where: { id: hello.runnerId },
        create: { id: hello.runnerId, ...facts },
        update: facts,
      });
      const present = (hello.workspaces ?? []).filter((w) => !w.default).map((w) => w.id);
      if (present.length) {
        // A folder the runner made is whole (made in staging, renamed into place) unless it is
        // still to be filled after: a git project's is cloned into once made, and a clone cut off
        // is done again by placement's next prepare, never taken as the project.
        await db.workspace.updateMany({
          where: {
            runnerId: hello.runnerId,
            id: { in: present },
            state: "creating",
            project: { sourceKind: { not: "git" } },
          },
          data: { state: "ready", error: null },
        });
      }
    },

    /** The connection this instance held is gone (a newer one elsewhere is left alone). */
    async disconnected(runnerId: string, at: Date): Promise<void> {
      await db.runnerNode.updateMany({
        where: { id: runnerId, instanceId },
        data: { instanceId: null, disconnectedAt: at, lastSeenAt: at },
      });
    },

    /** Renews the runners this instance holds (called every RUNNER_TOUCH_MS). */
    async touch(runnerIds: string[]): Promise<void> {
      if (runnerIds.length === 0) return;
      await db.runnerNode.updateMany({
        where: { id: { in: runnerIds }, instanceId },
        data: { lastSeenAt: new Date() },
      });
    },

    /** At start on SQLite (one server per file): every runner a previous process held is gone. */
    async forgetConnections(): Promise<void> {
      const n = await db.runnerNode.updateMany({
        where: { instanceId: { not: null } },
        data: { instanceId: null, disconnectedAt: new Date() },
      });
      if (n.count) log(`runners: ${n.count} runner(s) of the previous start marked gone until they reconnect`);
    },

    async get(runnerId: string): Promise<RunnerRow | undefined> {
      const row = await db.runnerNode.findUnique({ where: { id: runnerId } });
      if (!row) return undefined;
      return present(row, await db.workspace.count({ where: { runnerId } }));
    },

    /** Every runner with its load, and the workspaces of one org on each (the admin page). */
    async overview(orgId: string): Promise<
      Array<
        RunnerRow & {
          orgWorkspaces: Array<{
            id: string;
            project: string;
            userId: string;
            person: string;
            state: string;
            error: string | null;
          }>;
        }
      >
    > {
      const runners = await this.list();
      const rows = await db.workspace.findMany({
        where: { project: { orgId } },
        include: { project: { select: { name: true } } },
        orderBy: { createdAt: "asc" },
      });
      const people = new Map(
        (
          await db.user.findMany({
            where: { id: { in: [...new Set(rows.map((w) => w.userId))] } },
            select: { id: true, name: true, email: true },
          })
        ).map((u) => [u.id, u.name || u.email]),
      );
      const mine = (runnerId: string | null) =>
        rows
          .filter((w) => w.runnerId === runnerId)
          .map((w) => ({
            id: w.id,
            project: w.project.name,
            userId: w.userId,
            person: people.get(w.userId) ?? w.userId,
            state: w.state,
            error: w.error,
          }));
      const out = runners.map((r) => ({ ...r, orgWorkspaces: mine(r.id) }));
      // Workspaces no runner could take yet.
      const unplaced = mine(null);
      if (unplaced.length)
        out.push({
          id: "",
          labels: [],
          capacity: 0,
          freeDiskBytes: null,
          root: false,
          live: false,
          instanceId: null,
          connectedAt: null,
          disconnectedAt: null,
          lastSeenAt: new Date().toISOString(),
          workspaces: unplaced.length,
          orgWorkspaces: unplaced,
        });
      return out;
    },

    /** Every runner, live first, with its workspaces counted. */
    async list(): Promise<RunnerRow[]> {
      const rows = await db.runnerNode.findMany({ orderBy: { id: "asc" } });
      const counts = await db.workspace.groupBy({ by: ["runnerId"], _count: { _all: true } });
      const byRunner = new Map(counts.map((c) => [c.runnerId, c._count._all]));
      return rows.map((r) => present(r, byRunner.get(r.id) ?? 0)).sort((a, b) => Number(b.live) - Number(a.live));
    },
  };
}

function present(row: NodeRow, workspaces: number): RunnerRow {
  return {
    id: row.id,
    labels: labelsOf(row.labels),
    capacity: row.capacity,
    freeDiskBytes: row.freeDiskBytes === null ? null : Number(row.freeDiskBytes),
    root: row.root,
    live: isLive(row),
    instanceId: row.instanceId,
    connectedAt: row.connectedAt?.toISOString() ?? null,
    disconnectedAt: row.disconnectedAt?.toISOString() ?? null,
    lastSeenAt: row.lastSeenAt.toISOString(),
    workspaces,
  };
}

export type RunnerRegistry = ReturnType<typeof createRunnerRegistry>;
