// Test fixture for runner-chores.test.ts: a server process deleting a session with the real
// database, stopped (waiting to be killed -9) right after the delete committed, where the
// server would turn to the session's runner:
//   tsx server/services/session-delete-crash-child.ts <database-url> <actor json> <session-id>
// It prints `stopped` there.
import { openDb } from "../db";
import { createSessionService } from "./sessions";
import type { Actor } from "./types";

const [url, actorJson, sessionId] = process.argv.slice(2);
const { db } = await openDb(url);
const sessions = createSessionService(db, {
  onRemoved: () => {
    process.stdout.write("stopped\n");
    void new Promise<never>(() => setInterval(() => {}, 60_000));
  },
});
await sessions.remove(JSON.parse(actorJson) as Actor, sessionId);
