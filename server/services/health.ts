// What /api/health and the health query report: is the database answering and taking writes
// (a write probe, its answer kept a few seconds: the IDE asks every 2 s), is there room left in
// the data folder (QUIVER_MIN_FREE_DISK_MB), which runners are up. `problems` says in words
// what is wrong, for the IDE's status line and an operator's monitor. Only the server's operator
// (the local owner with accounts off; a monitor on this machine) reads the whole report: it names
// the data folder, each runner's workspace folder and placements, and the database's own errors
// (which may name its host). Anyone else reads a summary (`summarize`).
import { statfsSync } from "node:fs";
import type { Db, DbProvider } from "../db";
import type { RunnerSandbox } from "../protocol/runner";

export interface RunnerInfo {
  id: string;
  connected: boolean;
  sandboxed: boolean;
  /** Why unsandboxed, what network commands get: what the IDE's sandbox banner says. */
  sandbox?: RunnerSandbox;
  workspace: string;
  connectedAt?: string;
  /** Workspaces placed on it (the database's placement; services/placement.ts). */
  workspaces?: number;
  labels?: string[];
  capacity?: number;
}

/** Implemented by the runner pool. */
export interface RunnerStatusSource {
  status(): RunnerInfo[];
}

export interface HealthReport {
  ok: boolean;
  database: { provider: DbProvider; up: boolean; writable: boolean; error?: string };
  disk: { path: string; freeMb: number; minFreeMb: number; low: boolean } | { path: string; error: string };
  runners: RunnerInfo[];
  /** What is wrong with the database or the data folder, one sentence each (runners: above). */
  problems: string[];
}

/** What anyone who is not the operator is told: enough for the IDE's banners and status line. */
export interface HealthSummary {
  ok: boolean;
  database: { provider: DbProvider; up: boolean; writable: boolean };
  runners: Pick<RunnerInfo, "id" | "connected" | "sandboxed" | "sandbox">[];
  /** The same problems as the report's, said without names of the server's folders or hosts. */
  problems: string[];
}

export interface HealthOptions {
  db: Db;
  provider: DbProvider;
  runners: RunnerStatusSource;
  /** Commits a tiny write (db/probe.ts); rejects when the database takes none. */
  probe: () => Promise<void>;
  dataDir: string;
  minFreeMb: number;
  /** How long a probe's answer is reused (default 5 s). */
  cacheMs?: number;
}

export function healthCheck(o: HealthOptions): () => Promise<HealthReport> {
  let probed: { at: number; result: Promise<string | undefined> } | undefined;
  const probe = () => {
    const now = Date.now();
    if (!probed || now - probed.at > (o.cacheMs ?? 5_000)) {
      probed = {
        at: now,
        result: o.probe().then(
          () => undefined,
          (err: unknown) => (err as Error).message ?? String(err),
        ),
      };
    }
    return probed.result;
  };
  return async () => {
    const problems: string[] = [];
    let database: HealthReport["database"];
    try {
      await o.db.$queryRawUnsafe("SELECT 1");
      const refused = await probe();
      database = refused
        ? { provider: o.provider, up: true, writable: false, error: refused }
        : { provider: o.provider, up: true, writable: true };
      if (refused) problems.push(refused);
    } catch (err) {
      database = { provider: o.provider, up: false, writable: false, error: (err as Error).message };
      problems.push(`The database does not answer: ${(err as Error).message}`);
    }
    let disk: HealthReport["disk"];
    try {
      const s = statfsSync(o.dataDir);
      const freeMb = Math.floor((s.bavail * s.bsize) / (1024 * 1024));
      disk = { path: o.dataDir, freeMb, minFreeMb: o.minFreeMb, low: freeMb < o.minFreeMb };
      if (disk.low)
        problems.push(
          `Low disk space: ${freeMb} MB free in ${o.dataDir} (below ${o.minFreeMb} MB, QUIVER_MIN_FREE_DISK_MB). Free space before the database fills it.`,
        );
    } catch (err) {
      disk = { path: o.dataDir, error: (err as Error).message };
      problems.push(`The data folder ${o.dataDir} cannot be checked: ${(err as Error).message}`);
    }
    // Workspaces per runner come from the database: a runner away from this server still holds its own.
    const placed = new Map<string | null, number>();
    try {
      for (const c of await o.db.workspace.groupBy({ by: ["runnerId"], _count: { _all: true } }))
        placed.set(c.runnerId, c._count._all);
    } catch {
      // the database's own problem is reported above
    }
    const runners = o.runners
      .status()
      .map(({ id, connected, sandboxed, sandbox, workspace, connectedAt, labels, capacity }) => ({
        id,
        connected,
        sandboxed,
        sandbox,
        workspace,
        connectedAt,
        workspaces: placed.get(id) ?? 0,
        ...(labels ? { labels } : {}),
        ...(capacity !== undefined ? { capacity } : {}),
      }));
    return { ok: problems.length === 0 && runners.some((r) => r.connected), database, disk, runners, problems };
  };
}

/** The report without the server's folders, placements and error texts (see the header). */
export function summarize(report: HealthReport): HealthSummary {
  const { database: db, disk } = report;
  const problems: string[] = [];
  if (!db.up) problems.push("The database does not answer.");
  else if (!db.writable) problems.push("The database takes no writes.");
  if ("error" in disk) problems.push("The server's data folder cannot be checked.");
  else if (disk.low) problems.push("The server is low on disk space.");
  if (problems.length === 0 && report.problems.length > 0) problems.push("The server reports a problem.");
  return {
    ok: report.ok,
    database: { provider: db.provider, up: db.up, writable: db.writable },
    runners: report.runners.map(({ id, connected, sandboxed, sandbox }) => ({
      id,
      connected,
      sandboxed,
      ...(sandbox ? { sandbox } : {}),
    })),
    problems,
  };
}
