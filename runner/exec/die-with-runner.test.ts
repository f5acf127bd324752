// A command dies with its runner: after `kill -9` of a real runner process, nothing it was
// running (a command, what that command forked into the background, a terminal's shell and
// what runs in it) goes on changing the workspace. Sandboxed (warm sandbox, bubblewrap) and
// unsandboxed (setpriv's parent-death signal and a PID namespace per command).
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnRunner, startServer, tempDir, waitFor, type RunnerChild, type TestServer } from "../../server/executors/runner/testing";
import { sandboxInfo } from "./sandbox";
import { processesMatching } from "./testing";

const bwrap = sandboxInfo("auto").available;
const modes = bwrap ? (["auto", "off"] as const) : (["off"] as const);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(modes)("a runner killed with SIGKILL takes its commands with it (QUIVER_SANDBOX=%s)", (mode) => {
  let server: TestServer | undefined;
  let runner: RunnerChild | undefined;
  let dir = "";

  afterEach(async () => {
    runner?.child.kill("SIGKILL");
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function start(): Promise<void> {
    dir = await tempDir();
    server = await startServer();
    runner = spawnRunner({ url: server.url, workspace: dir, env: { NODE_ENV: "test", QUIVER_SANDBOX: mode } });
    await waitFor(() => server!.pool.status().some((r) => r.connected), 20_000, "runner to connect");
  }

  // Unique sleep lengths are the markers `processesMatching` looks for.
  const shell = (command: string) =>
    server!.pool.run({ sessionId: "s1", callId: `c${Math.random()}`, op: "shell", input: { command, yield_time_ms: 300 }, deadline: Date.now() + 30_000, signal: new AbortController().signal });

  it("a running command, the subshell it forked and a terminal's command never write after the kill", async () => {
    await start();
    // Long enough to outlast a slow start on a busy machine; the wait after the kill outlasts them all.
    const fg = mode === "auto" ? "5.0101" : "5.0201";
    const bg = mode === "auto" ? "5.0102" : "5.0202";
    const term = mode === "auto" ? "8.0103" : "8.0203";
    const pty = server!.pool.pty.open("s1", { cols: 80, rows: 24 });
    let screen = "";
    pty.onData((d) => (screen += d));
    pty.write(`echo ready-$((6*7)); sleep ${term}; echo late > late-pty.txt\r`);
    await waitFor(() => screen.includes("ready-42"), 15_000, "the terminal's command to start");
    await waitFor(async () => (await processesMatching(`sleep ${term}`)).length > 0, 5000, "the terminal's sleep");
    // The terminal first: its network namespace takes a moment to start, and these sleeps are short.
    const r1 = await shell(`(sleep ${bg}; echo late > late-bg.txt) & sleep ${fg}; echo late > late-fg.txt`);
    expect(r1.meta, r1.output).toMatchObject({ running: true, sandboxed: mode === "auto" });
    expect((await processesMatching(`sleep ${fg}`)).length).toBeGreaterThan(0);
    expect((await processesMatching(`sleep ${bg}`)).length).toBeGreaterThan(0);

    runner!.child.kill("SIGKILL");
    await runner!.exited;
    await sleep(9000);
    for (const name of ["late-fg.txt", "late-bg.txt", "late-pty.txt"]) expect(existsSync(join(dir, name)), name).toBe(false);
    for (const marker of [fg, bg, term]) expect(await processesMatching(`sleep ${marker}`), marker).toEqual([]);
  }, 60_000);
});
