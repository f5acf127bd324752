// Test fixture for the restart test: a server process that starts a turn and is then killed
// with SIGKILL mid-stream by the test, leaving the turn "running" in the database.
//   tsx server/engine/crash-child.ts <database-url> <session-id> <user-id> <anthropic|openai> <base-url>
import { openDb } from "../db";
import { createEventHub } from "../hub/events";
import { createEngine } from "./engine";
import { testDispatcher } from "../testing/engine";

const [url, sessionId, userId, kind, baseURL] = process.argv.slice(2);
const { db, rows } = await openDb(url);
const hub = createEventHub(db, { url });
const env =
  kind === "anthropic"
    ? { QUIVER_PROVIDER: "anthropic" as const, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: baseURL }
    : { QUIVER_PROVIDER: "openai" as const, OPENAI_API_KEY: "k", OPENAI_BASE_URL: baseURL };
const engine = createEngine({ db, rows, hub, dispatcher: testDispatcher(), env, systemPrompt: "SYSTEM" });
const { turnId } = await engine.sendMessage(sessionId, { userId }, "start and crash");
process.stdout.write(`started ${turnId}\n`);
