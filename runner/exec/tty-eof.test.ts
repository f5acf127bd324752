// A command blocked reading the terminal when the runner is killed must not see end-of-file and
// run on before its namespace dies: `read x; touch after` never touches. Without the process
// that holds the terminal's master end (launch.ts holdTerminal) 1 to 2 rounds in 10 touched.
// Each round is a fresh runner: the race is lost in a few ms or not at all.
import { readdir, rm } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import {
  spawnRunner,
  startServer,
  tempDir,
  waitFor,
  type RunnerChild,
  type TestServer,
} from "../../server/testing/runner";
import { sandboxInfo } from "./sandbox";

const bwrap = sandboxInfo("auto").available;
const modes = bwrap ? (["auto", "off"] as const) : (["off"] as const);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(modes)("a terminal reading its input when the runner is killed (QUIVER_SANDBOX=%s)", (mode) => {
  let server: TestServer | undefined;
  let runner: RunnerChild | undefined;
  let dir = "";
  afterEach(async () => {
    runner?.child.kill("SIGKILL");
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("never runs what follows the read", async () => {
    dir = await tempDir();
    server = await startServer();
    for (let round = 0; round < 6; round++) {
      runner = spawnRunner({ url: server.url, workspace: dir, env: { NODE_ENV: "test", QUIVER_SANDBOX: mode } });
      await waitFor(() => server!.pool.status().some((r) => r.connected), 60_000, "runner to connect");
      const pty = server.pool.pty.open("s1", { cols: 80, rows: 24 });
      let screen = "";
      pty.onData((d) => (screen += d));
      pty.write(`echo ready-$((6*7)); read x; touch after-read-${round}\r`);
      await waitFor(() => screen.includes("ready-42"), 15_000, "the read to start");
      await sleep(200);
      runner.child.kill("SIGKILL");
      await runner.exited;
      await sleep(1000);
    }
    expect((await readdir(dir)).filter((f) => f.startsWith("after-read-"))).toEqual([]);
  }, 600_000);
});
