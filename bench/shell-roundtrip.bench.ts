// Round trip of the `shell` tool running `true`: server tool → runner pool → WebSocket → runner
// process → exec server in the warm sandbox → the command shell it started ahead (its own PID
// namespace, `unshare --pid … bash`) → result back, against child_process.execFile('true') in the
// same run. Two local rows separate what the command costs from what the transport adds: the
// exec server's per-call work done locally (a command shell started ahead, handed `true`), and
// a namespace and shell started per call (what a call would cost without starting ahead).
// Measurements are interleaved so load on the shared machine falls on all of them alike, and
// spaced GAP_MS apart so work a case leaves running in the background (the exec server starting
// the next command shell, a child's teardown) never lands inside another case's timing. The
// first call, which starts the warm sandbox (bubblewrap, Node, the login profile), is reported
// on its own.
// Goal (issue 6): ≤ 2 ms added at p50.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { BASH_C } from "../runner/exec/launch";
import { findOnPath, sandboxInfo } from "../runner/exec/sandbox";
import { COMMAND_SHELL, commandInput } from "../runner/exec/warm";
import { spawnRunner, startServer, tempDir, waitFor } from "../server/testing/runner";
import { shellTool } from "../server/tools/builtin/shell";
import type { ToolContext } from "../server/tools/tool";
import { goal, percentile, printTable, ratio } from "./lib";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 150);
const WARMUP = 20;
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 10);
const run = promisify(execFile);

const dir = await tempDir("quiver-bench-");
// An empty HOME: the machine's own login profile is not what is being measured.
const home = await mkdtemp(join(tmpdir(), "quiver-bench-home-"));
const env = { NODE_ENV: "production" as const, PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home };
/**
 * The exec server's per-call work, done here: a command shell started ahead (outside the timed
 * part, as the exec server starts the next one after answering) is handed `true` on stdin.
 */
function localCommandShell(argv: string[]) {
  const start = () => {
    const c = spawn(argv[0], argv.slice(1), { cwd: dir, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    c.stdout!.resume();
    c.stderr!.resume();
    return c;
  };
  let ahead: ChildProcess = start();
  return {
    async run() {
      if (ahead.stdin!.writableEnded) ahead = start(); // called again before the next one was started
      const c = ahead;
      const closed = new Promise<number | null>((resolve) => c.once("close", (code) => resolve(code)));
      c.stdin!.end(commandInput({ command: "true", workspace: dir, cwd: dir, network: false, marker: "bench" }));
      const code = await closed;
      if (code !== 0) throw new Error(`the local command shell exited ${code}`);
      setImmediate(() => (ahead = start()));
    },
    dispose: () => ahead.kill("SIGKILL"),
  };
}
let localShell: ReturnType<typeof localCommandShell> | undefined;

const server = await startServer();
const runner = spawnRunner({ url: server.url, workspace: dir, env: { NODE_ENV: "production", HOME: home } });

try {
  await waitFor(() => server.pool.status().some((r) => r.connected), 30_000, "runner to connect");
  const status = server.pool.status()[0];
  const info = sandboxInfo("auto");
  // The PID namespace the exec server gives each command (when it can, as it can here as root).
  const unshare = findOnPath("unshare");
  const pidns = unshare ? [unshare, "--pid", "--fork", "--kill-child", "--mount-proc"] : [];
  const perCall = [...pidns, ...BASH_C, "true"];
  const pidnsWorks =
    pidns.length > 0 &&
    (await run(perCall[0], perCall.slice(1)).then(
      () => true,
      () => false,
    ));
  const warm = pidnsWorks && info.available;
  const local = (localShell = warm ? localCommandShell([...pidns, ...BASH_C, COMMAND_SHELL]) : undefined);

  const parsed = shellTool.parse({ command: "true" });
  if (!parsed.ok) throw new Error(parsed.error);
  let calls = 0;
  const viaRunner = async () => {
    const callId = `bench-${++calls}`;
    const signal = new AbortController().signal;
    const ctx: ToolContext = {
      sessionId: "bench",
      callId,
      signal,
      progress: () => {},
      services: {},
      remote: (input, o = {}) =>
        server.pool.run({
          sessionId: "bench",
          callId,
          op: "shell",
          input,
          deadline: Date.now() + (o.timeoutMs ?? 60_000),
          signal,
        }),
    };
    const r = await shellTool.execute(parsed.value, ctx);
    if (r.isError) throw new Error(`shell true failed: ${r.output}`);
  };
  // The protocol alone: a poll of an unknown handle is answered by the runner without spawning.
  const transportOnly = async () => {
    const callId = `bench-${++calls}`;
    const r = await server.pool.run({
      sessionId: "bench",
      callId,
      op: "shell",
      input: { session_id: "sh_000000" },
      deadline: Date.now() + 60_000,
      signal: new AbortController().signal,
    });
    if (r.ok) throw new Error("a poll of an unknown handle succeeded");
  };
  const coldStart = performance.now();
  await viaRunner();
  const cold = performance.now() - coldStart;
  const cases: Array<[string, () => Promise<unknown>]> = [
    ["execFile('true')  [baseline]", () => run("true")],
    local
      ? ["local: command shell started ahead, handed true  [the exec server's per-call work]", () => local.run()]
      : [
          "local: execFile(bash -c true)  [the runner's per-call work]",
          () => run(BASH_C[0], [...BASH_C.slice(1), "true"], { env, cwd: dir }),
        ],
    ["shell tool → runner → back", viaRunner],
    ["protocol only: shell poll → runner → back, no spawn", transportOnly],
  ];
  if (warm)
    cases.push([
      "local: execFile(unshare --pid … bash -c true)  [namespace + shell per call]",
      () => run(perCall[0], perCall.slice(1), { env, cwd: dir }),
    ]);
  const times = cases.map(() => [] as number[]);
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    // Rotate the order so no case always runs right after another.
    for (let k = 0; k < cases.length; k++) {
      const c = (round + k) % cases.length;
      const start = performance.now();
      await cases[c][1]();
      if (round >= WARMUP) times[c].push(performance.now() - start);
      await new Promise((r) => setTimeout(r, GAP_MS));
    }
  }
  const sorted = times.map((t) => Float64Array.from(t).sort());
  const p = (i: number, q: number) => percentile(sorted[i], q);
  printTable(
    `shell round trip, ${ROUNDS} calls each, ${GAP_MS} ms apart (runner ${status.sandboxed ? `sandboxed: ${status.sandboxKind}` : "unsandboxed"})`,
    ["case", { title: "p50 ms" }, { title: "p99 ms" }, { title: "p50 vs baseline" }, { title: "added p50 ms" }],
    cases.map(([name], i) => [
      name,
      p(i, 50),
      p(i, 99),
      i === 3 ? "" : ratio(p(i, 50), p(0, 50)),
      i === 3 ? "" : p(i, 50) - p(0, 50),
    ]),
  );
  const transport = p(2, 50) - p(1, 50);
  // Informational, not a goal: the local row forks nothing, so this is everything around the
  // command (WebSocket both ways, the runner's op, the exec server's pipe and its child handling).
  console.log(`\ntransport and protocol (shell tool p50 − the per-call work done locally): ${transport.toFixed(2)} ms`);
  console.log(
    `protocol alone (a call answered without spawning): ${p(3, 50).toFixed(2)} ms p50, ${p(3, 99).toFixed(2)} ms p99`,
  );
  console.log(`command itself (the per-call work locally − execFile('true')): ${(p(1, 50) - p(0, 50)).toFixed(2)} ms`);
  console.log(
    `first call, starting the ${status.sandboxed ? "warm sandbox" : "launcher"} (login profile included): ${cold.toFixed(0)} ms`,
  );
  const added = p(2, 50) - p(0, 50);
  goal(
    "≤ 2 ms added at p50 vs execFile('true')",
    added <= 2,
    `${added.toFixed(2)} ms (includes bash${warm ? " and a PID namespace per command" : ""})`,
  );
} finally {
  localShell?.dispose();
  await runner.stop();
  await server.close();
  await rm(dir, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
}
