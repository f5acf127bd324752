// Test fixture for multi-instance.test.ts: a whole server instance (parts with its cluster on
// PostgreSQL) in its own process that starts a turn and prints its id; the test then kills it
// with SIGKILL, so its heartbeat stops with no cleanup, as a crashed machine's would.
//   tsx server/multi-instance-child.ts <database-url> <session-id> <user-id> <anthropic-base-url> <data-dir>
import { parseEnv } from "./env";
import { openDb } from "./db";
import { createParts } from "./parts";

const [url, sessionId, userId, baseURL, dataDir] = process.argv.slice(2);
const handle = await openDb(url, { thread: true });
const env = parseEnv({
  PORT: "0",
  DATABASE_URL: url,
  QUIVER_DATA_DIR: dataDir,
  QUIVER_LOCAL_RUNNER: "0",
  QUIVER_PROVIDER: "anthropic",
  QUIVER_MODEL: "claude-test",
  ANTHROPIC_API_KEY: "test-key",
  ANTHROPIC_BASE_URL: baseURL,
});
const parts = await createParts({
  env, db: handle.db, dbProvider: handle.provider, dbUrl: url, runnerTokens: ["x".repeat(32)],
  actorFor: () => null, canUseSession: async () => true, log: (l) => process.stderr.write(`${l}\n`),
  cluster: { heartbeatMs: 200, ttlMs: 1_500, idleMs: 300 },
});
const { turnId } = await parts.services.engine.sendMessage(sessionId, { userId }, "start, then die");
process.stdout.write(`started ${turnId} ${parts.cluster!.id}\n`);
