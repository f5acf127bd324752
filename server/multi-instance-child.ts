// Test fixture for multi-instance.test.ts: a whole server instance (parts with its cluster on
// PostgreSQL) in its own process that starts a turn and prints its id; the test then kills it
// with SIGKILL, so its heartbeat stops with no cleanup, as a crashed machine's would.
//   tsx server/multi-instance-child.ts <database-url> <session-id> <user-id> <anthropic-base-url> <data-dir>
import { openInstance } from "./testing/instance";

const [url, sessionId, userId, baseURL, dataDir] = process.argv.slice(2);
const { parts } = await openInstance(url, {
  anthropicBaseURL: baseURL,
  dataDir,
  log: (l) => process.stderr.write(`${l}\n`),
});
const { turnId } = await parts.services.engine.sendMessage(sessionId, { userId }, "start, then die");
process.stdout.write(`started ${turnId} ${parts.cluster!.id}\n`);
