// A command dies with its runner: after `kill -9` of a real runner process, nothing it was
// running (a command, what that command forked into the background, a terminal's shell and
// what runs in it, a setsid+nohup daemon) goes on changing the workspace. Sandboxed (warm sandbox, bubblewrap) and
// unsandboxed (setpriv's parent-death signal and a PID namespace per command).
// The terminal has a race of its own: whoever owns its session hangs up its foreground job when
// it dies, and a shell whose job just ended reads the next line queued on the terminal. The
// second case queues `touch` behind a running command, and behind commands that survive a
// hang-up (a HUP trap, `nohup`, a background job, `setsid`), then kills the runner, many times.
// The third case is a command blocked reading the terminal: it got end-of-file when the
// runner's end of the terminal closed, a moment before the namespace was killed (`read x; touch`
// touched in 1 to 2 rounds of 10), until a process outside the namespace held that end open
// (launch.ts holdTerminal).
import { existsSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  runShell,
  spawnRunner,
  startServer,
  tempDir,
  waitFor,
  type RunnerChild,
  type TestServer,
} from "../../server/testing/runner";
import { sandboxInfo } from "./sandbox";
import { processesMatching } from "../testing/exec";

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
    await waitFor(() => server!.pool.status().some((r) => r.connected), 60_000, "runner to connect");
  }

  // Unique sleep lengths are the markers `processesMatching` looks for.
  const shell = (command: string) => runShell(server!.pool, command, { input: { yield_time_ms: 300 } });

  it("a running command, the subshell it forked and a terminal's command never write after the kill", async () => {
    await start();
    // Far longer than any start on a busy machine: each is checked to be running at the kill, and
    // its bash would write its file at once if only its sleep were killed.
    const fg = mode === "auto" ? "40.0101" : "40.0201";
    const bg = mode === "auto" ? "40.0102" : "40.0202";
    const term = mode === "auto" ? "40.0103" : "40.0203";
    const sid = mode === "auto" ? "40.0104" : "40.0204";
    const pty = server!.pool.pty.open("s1", { cols: 80, rows: 24 });
    let screen = "";
    pty.onData((d) => (screen += d));
    // The terminal's sleep alone on its line: what its shell runs after it is the race below.
    pty.write(`echo ready-$((6*7)); sleep ${term}\r`);
    await waitFor(() => screen.includes("ready-42"), 15_000, "the terminal's command to start");
    await waitFor(async () => (await processesMatching(`sleep ${term}`)).length > 0, 5000, "the terminal's sleep");
    // The terminal first: its network namespace takes a moment to start. The command forks a
    // subshell and a setsid+nohup daemon (its own session, SIGHUP ignored) before its own sleep.
    const r1 = await shell(
      `(sleep ${bg}; echo late > late-bg.txt) & setsid nohup sh -c 'sleep ${sid}; echo late > late-sid.txt' >/dev/null 2>&1 & sleep ${fg}; echo late > late-fg.txt`,
    );
    expect(r1.meta, r1.output).toMatchObject({ running: true, sandboxed: mode === "auto" });
    expect((await processesMatching(`sleep ${fg}`)).length).toBeGreaterThan(0);
    expect((await processesMatching(`sleep ${bg}`)).length).toBeGreaterThan(0);
    await waitFor(async () => (await processesMatching(`sleep ${sid}`)).length > 0, 5000, "the setsid daemon's sleep");

    // All three still running at the kill (a test on a slow machine whose sleeps had ended would
    // prove nothing).
    for (const marker of [fg, bg, term, sid])
      expect((await processesMatching(`sleep ${marker}`)).length, `sleep ${marker} before the kill`).toBeGreaterThan(0);
    runner!.child.kill("SIGKILL");
    await runner!.exited;
    // Gone within a few seconds; then nothing of theirs is left to write (a bash whose sleep
    // alone was killed would write its file at once, so a short wait after shows that too).
    await waitFor(
      async () =>
        (await Promise.all([fg, bg, term, sid].map((m) => processesMatching(`sleep ${m}`)))).every(
          (p) => p.length === 0,
        ),
      5000,
      "the commands to die with the runner",
    ).catch(() => undefined);
    await sleep(1500);
    const left = await Promise.all([fg, bg, term, sid].map((m) => processesMatching(`sleep ${m}`)));
    for (const pid of left.flat()) process.kill(pid, "SIGKILL"); // a failing run leaves nothing behind
    for (const name of ["late-fg.txt", "late-bg.txt", "late-sid.txt"])
      expect(existsSync(join(dir, name)), name).toBe(false);
    expect(Object.fromEntries([fg, bg, term, sid].map((m, i) => [m, left[i]]))).toEqual({
      [fg]: [],
      [bg]: [],
      [term]: [],
      [sid]: [],
    });
  }, 60_000);

  // Each round is a fresh runner: the race is lost in a few ms or not at all, so one kill proves little.
  it("a terminal's shell never runs the line queued behind its command, nor a command that outlives a hang-up", async () => {
    dir = await tempDir();
    server = await startServer();
    const base = mode === "auto" ? 40.03 : 40.04;
    for (let round = 0; round < 8; round++) {
      runner = spawnRunner({ url: server.url, workspace: dir, env: { NODE_ENV: "test", QUIVER_SANDBOX: mode } });
      await waitFor(() => server!.pool.status().some((r) => r.connected), 60_000, "runner to connect");
      const pty = server.pool.pty.open("s1", { cols: 80, rows: 24 });
      let screen = "";
      pty.onData((d) => (screen += d));
      const m = (k: number) => (base + round / 1000 + k / 100000).toFixed(5);
      // A daemon that ignores the hang-up, a background job that traps it to write, another
      // background job and a setsid child; then the foreground command, which traps the hang-up
      // to write (what a dying session leader sends its foreground job), with a line queued
      // behind it.
      pty.write(
        `nohup sh -c 'sleep ${m(1)}; touch nohup-${round}' >/dev/null 2>&1 & (trap 'touch trapbg-${round}' HUP; sleep ${m(2)}) & (sleep ${m(3)}; touch bg-${round}) & setsid sh -c 'sleep ${m(4)}; touch sid-${round}' & echo ready-$((6*7)); bash -c "trap 'touch trap-${round}' HUP; sleep ${m(5)}; :"\r`,
      );
      await waitFor(() => screen.includes("ready-42"), 15_000, "the terminal's commands to start");
      await waitFor(
        async () =>
          (await Promise.all([1, 2, 3, 4, 5].map((k) => processesMatching(`sleep ${m(k)}`)))).every(
            (p) => p.length > 0,
          ),
        15_000,
        `every sleep of the terminal: ${screen}`,
      );
      // Killed once the line is on the terminal (its echo is back), not while it is on its way.
      pty.write(`touch after-kill-${round}\r`);
      await waitFor(() => screen.includes(`touch after-kill-${round}`), 15_000, "the queued line's echo");
      runner.child.kill("SIGKILL");
      await runner.exited;
      await waitFor(
        async () =>
          (await Promise.all([1, 2, 3, 4, 5].map((k) => processesMatching(`sleep ${m(k)}`)))).every(
            (p) => p.length === 0,
          ),
        5000,
        "the terminal's commands to die with the runner",
      ).catch(() => undefined);
      await sleep(300);
      const left = (await Promise.all([1, 2, 3, 4, 5].map((k) => processesMatching(`sleep ${m(k)}`)))).flat();
      for (const pid of left) process.kill(pid, "SIGKILL");
      expect(left, `round ${round}: processes left`).toEqual([]);
      const written = (await readdir(dir)).filter((f) => /-\d+$/.test(f));
      expect(written, `round ${round}: files written after the kill`).toEqual([]);
    }
  }, 600_000);

  it("a command blocked reading the terminal never runs what follows the read", async () => {
    dir = await tempDir();
    server = await startServer();
    // Each round is a fresh runner: the race is lost in a few ms or not at all.
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
