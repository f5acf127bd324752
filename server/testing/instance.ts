// A whole server instance's parts on a migrated database, as the multi-instance tests start
// them (in the test process, or in a child that gets killed): the engine on the fake provider's
// Anthropic endpoint, no local runner, and a cluster with quick timings on PostgreSQL.
import { openDb, type DbHandle } from "../db";
import { testServerEnv } from "./env";
import { createParts, type Parts } from "../parts";

/** Heartbeats every 200 ms, gone after 1.5 s, leases let go after 300 ms idle. */
export const quickCluster = { heartbeatMs: 200, ttlMs: 1_500, idleMs: 300 };

export async function openInstance(
  url: string,
  opts: { anthropicBaseURL: string; dataDir: string; log: (line: string) => void },
): Promise<{ handle: DbHandle; parts: Parts }> {
  const handle = await openDb(url, { thread: true });
  const env = testServerEnv(opts.dataDir, {
    DATABASE_URL: url,
    QUIVER_PROVIDER: "anthropic",
    QUIVER_MODEL: "claude-test",
    ANTHROPIC_API_KEY: "test-key",
    ANTHROPIC_BASE_URL: opts.anthropicBaseURL,
  });
  const parts = await createParts({
    env,
    db: handle.db,
    rows: handle.rows,
    dbProvider: handle.provider,
    dbUrl: url,
    runnerTokens: ["x".repeat(32)],
    actorFor: () => null,
    canUseSession: async () => true,
    log: opts.log,
    cluster: quickCluster,
  });
  return { handle, parts };
}
