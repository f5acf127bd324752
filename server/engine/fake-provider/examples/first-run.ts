// One command for a first look at Quiver without a model account:
//   npx tsx server/engine/fake-provider/examples/first-run.ts [--port 3000] [--script FILE]
// starts the fake provider with first-run.json (or --script) on a free port, then the IDE as
// `npm start` runs it against it; the IDE opens on http://localhost:3000 (PORT, or --port).
// Ctrl-C stops both. The fake provider and the IDE are this process's children: it stops them
// when it ends, and a SIGINT or SIGTERM sent to it alone (a process manager's, `timeout`'s)
// reaches the IDE too, which it would not through npm and a shell.
// Each run starts on a data folder of its own, removed when it ends (QUIVER_DATA_DIR names one to
// keep instead): the example writes files and opens ports, and a person's real sessions and
// workspace in `.quiver` are not the place for it; a second run then plays it just as the first.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Script } from "../script";
import { startFakeProvider } from "../server";

export const FIRST_RUN_SCRIPT = join(import.meta.dirname, "first-run.json");

/** Where the demo keeps its data: `QUIVER_DATA_DIR` when set (kept), else a new folder (removed
 *  when the demo ends). */
export function demoDataDir(env: Record<string, string | undefined>): { dir: string; removeAtEnd: boolean } {
  if (env.QUIVER_DATA_DIR) return { dir: env.QUIVER_DATA_DIR, removeAtEnd: false };
  return { dir: mkdtempSync(join(tmpdir(), "quiver-demo-")), removeAtEnd: true };
}

/** The example script, checked against the fake provider's schema. */
export function loadScript(file = FIRST_RUN_SCRIPT): Script {
  return Script.parse(JSON.parse(readFileSync(file, "utf8")));
}

async function main() {
  const { values } = parseArgs({
    options: { port: { type: "string" }, script: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    console.log(
      "Usage: npx tsx server/engine/fake-provider/examples/first-run.ts [--port N] [--script FILE]\nStarts the IDE (npm start) against the fake provider playing FILE (default: first-run.json).",
    );
    return;
  }
  const script = loadScript(values.script ?? FIRST_RUN_SCRIPT);
  const fake = await startFakeProvider({ steps: script.steps, loop: script.loop, port: 0, models: script.models });
  const port = values.port ?? process.env.PORT ?? "3000";
  const data = demoDataDir(process.env);
  console.log(
    `fake provider on ${fake.anthropicBaseURL}; starting the IDE on http://localhost:${port} — type any message in the chat to play the example`,
  );
  console.log(
    data.removeAtEnd
      ? `the demo's data (sessions, workspace) is in ${data.dir}, removed when it stops; QUIVER_DATA_DIR=<folder> keeps it`
      : `the demo's data (sessions, workspace) is in ${data.dir} (QUIVER_DATA_DIR)`,
  );
  const root = join(import.meta.dirname, "../../../..");
  // --parent-pid: a SIGKILL of this process, which it cannot pass on, still ends the IDE.
  const ide = spawn(process.execPath, [join(root, "server/start.mjs"), "--parent-pid", String(process.pid)], {
    cwd: root,
    stdio: "inherit",
    env: {
      ...process.env,
      PORT: port,
      QUIVER_DATA_DIR: data.dir,
      QUIVER_PROVIDER: "anthropic",
      QUIVER_MODEL: process.env.QUIVER_MODEL ?? "fake-model",
      ANTHROPIC_API_KEY: "fake",
      ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
    },
  });
  const stop = () => ide.kill("SIGINT");
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, stop);
  ide.on(
    "exit",
    (code) =>
      void fake.close().then(() => {
        if (data.removeAtEnd) rmSync(data.dir, { recursive: true, force: true });
        process.exit(code ?? 0);
      }),
  );
}

if (process.argv[1] && import.meta.filename === process.argv[1]) await main();
