// `npm start`'s restart (start.mjs): on a data folder whose database exists, the query thread is
// started before the server's bundle loads and the server adopts it, answering health with a
// writable database; on a first start (no database yet) none is started early.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../testing/ports";

const root = join(import.meta.dirname, "..", "..");
const dataDir = mkdtempSync(join(tmpdir(), "quiver-early-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Starts `npm start` without pages or runner, waits for a healthy answer, stops it; returns its output and the answer. */
async function startOnce(): Promise<{ output: string; health: unknown }> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    QUIVER_DATA_DIR: dataDir,
    QUIVER_LOCAL_RUNNER: "0",
    QUIVER_LOG_LEVEL: "debug",
  };
  delete env.DATABASE_URL; // the default: SQLite in the data folder
  const child = spawn(process.execPath, [join(root, "server", "start.mjs"), "--no-web"], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    const deadline = Date.now() + 150_000; // the first start may compile the server
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited:\n${output}`);
      if (Date.now() > deadline) throw new Error(`no healthy answer:\n${output}`);
      const res = await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => undefined);
      if (res?.status === 200) return { output, health: await res.json() };
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

describe("npm start's query thread, started before the bundle loads", () => {
  it("is not started on a first start, and adopted on a restart", async () => {
    const first = await startOnce();
    expect(first.output).not.toContain("started early");
    const again = await startOnce();
    expect(again.health).toMatchObject({ database: { provider: "sqlite", up: true, writable: true } });
    expect(again.output).toContain("threads started early and adopted: 1");
    expect(again.output).not.toContain("was not used");
  }, 300_000);
});
