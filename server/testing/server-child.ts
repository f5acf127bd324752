// Test fixture: a whole Quiver server (startQuiver without the web app, with its local runner)
// in a process of its own, so a test can kill it with SIGKILL mid-turn and start another on the
// same data folder, as a crash and a restart would. Configured by its environment (PORT is
// always 0); prints `ready <url>` once it serves, and its log on stderr.
//   tsx server/testing/server-child.ts
import { join } from "node:path";
import { startQuiver } from "../app";
import { parseEnv } from "../env";

const env = parseEnv({ ...process.env, PORT: "0" });
const quiver = await startQuiver({
  env,
  root: join(import.meta.dirname, "../.."),
  web: false,
  log: (line) => process.stderr.write(`${line}\n`),
});
const deadline = Date.now() + 30_000;
while (
  env.QUIVER_LOCAL_RUNNER === "1" &&
  !(await quiver.services.health()).runners.some((r) => r.connected) &&
  Date.now() < deadline
)
  await new Promise((r) => setTimeout(r, 100));
process.stdout.write(`ready ${quiver.url}\n`);
