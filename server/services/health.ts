// What /api/health and the health query report: is the database answering, which runners are up.
import type { Db, DbProvider } from "../db";

export interface RunnerInfo {
  id: string;
  connected: boolean;
  sandboxed: boolean;
  workspace: string;
  connectedAt?: string;
}

/** Implemented by the runner pool. */
export interface RunnerStatusSource {
  status(): RunnerInfo[];
}

export interface HealthReport {
  ok: boolean;
  database: { provider: DbProvider; up: boolean; error?: string };
  runners: RunnerInfo[];
}

export async function checkHealth(db: Db, provider: DbProvider, runners: RunnerStatusSource): Promise<HealthReport> {
  let database: HealthReport["database"];
  try {
    await db.$queryRawUnsafe("SELECT 1");
    database = { provider, up: true };
  } catch (err) {
    database = { provider, up: false, error: (err as Error).message };
  }
  const list = runners.status().map(({ id, connected, sandboxed, workspace, connectedAt }) => ({ id, connected, sandboxed, workspace, connectedAt }));
  return { ok: database.up && list.some((r) => r.connected), database, runners: list };
}
