// Round trip of the `shell` tool running `true`: server tool → runner pool → WebSocket → runner
// process → (sandboxed) bash -lc → result back, against child_process.execFile('true') in the
// same run, and against the runner's own spawn (the same sandbox and bash -lc, done locally) to
// separate what the command costs from what the transport adds. Measurements are interleaved
// so load on the shared machine falls on all three alike.
// Goal (issue 6): ≤ 2 ms added at p50.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { sandboxed, sandboxInfo } from "../runner/exec/sandbox";
import { spawnRunner, startServer, tempDir, waitFor } from "../server/executors/runner/testing";
import { shellTool } from "../server/tools/builtin/shell";
import type { ToolContext } from "../server/tools/tool";
import { goal, percentile, printTable, ratio } from "./lib";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 150);
const WARMUP = 20;
const run = promisify(execFile);

const dir = await tempDir("quiver-bench-");
// An empty HOME: the machine's own login profile is not what is being measured.
const home = await mkdtemp(join(tmpdir(), "quiver-bench-home-"));
const env = { NODE_ENV: "production" as const, PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home };
const server = await startServer();
const runner = spawnRunner({ url: server.url, workspace: dir, env: { NODE_ENV: "production", HOME: home } });

try {
  await waitFor(() => server.pool.status().some((r) => r.connected), 30_000, "runner to connect");
  const status = server.pool.status()[0];
  const info = sandboxInfo("auto");
  const local = sandboxed(info, { workspace: dir, cwd: dir, network: false, newSession: true }, ["bash", "-lc", "true"]);

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
        server.pool.run({ sessionId: "bench", callId, op: "shell", input, deadline: Date.now() + (o.timeoutMs ?? 60_000), signal }),
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
  const cases: Array<[string, () => Promise<unknown>]> = [
    ["execFile('true')  [baseline]", () => run("true")],
    [`execFile(${info.available ? "bwrap … " : ""}bash -lc true)  [same spawn, local]`, () => run(local.file, local.args, { env, cwd: dir })],
    ["shell tool → runner → back", viaRunner],
    ["protocol only: shell poll → runner → back, no spawn", transportOnly],
  ];
  const times = cases.map(() => [] as number[]);
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    // Rotate the order so no case always runs right after another.
    for (let k = 0; k < cases.length; k++) {
      const c = (round + k) % cases.length;
      const start = performance.now();
      await cases[c][1]();
      if (round >= WARMUP) times[c].push(performance.now() - start);
    }
  }
  const sorted = times.map((t) => Float64Array.from(t).sort());
  const p = (i: number, q: number) => percentile(sorted[i], q);
  printTable(
    `shell round trip, ${ROUNDS} calls each (runner ${status.sandboxed ? `sandboxed: ${status.sandboxKind}` : "unsandboxed"})`,
    ["case", { title: "p50 ms" }, { title: "p99 ms" }, { title: "p50 vs baseline" }, { title: "added p50 ms" }],
    cases.map(([name], i) => [name, p(i, 50), p(i, 99), i === 3 ? "" : ratio(p(i, 50), p(0, 50)), i === 3 ? "" : p(i, 50) - p(0, 50)]),
  );
  const transport = p(2, 50) - p(1, 50);
  console.log(`\ntransport and protocol (shell tool p50 − same spawn done locally): ${transport.toFixed(2)} ms`);
  console.log(`protocol alone (a call answered without spawning): ${p(3, 50).toFixed(2)} ms p50, ${p(3, 99).toFixed(2)} ms p99`);
  console.log(`command itself (bash -lc${info.available ? " in bwrap" : ""} − execFile('true')): ${(p(1, 50) - p(0, 50)).toFixed(2)} ms`);
  goal("≤ 2 ms added at p50 by server → runner → back (vs the same spawn locally)", transport <= 2, `${transport.toFixed(2)} ms`);
  const added = p(2, 50) - p(0, 50);
  goal("≤ 2 ms added at p50 vs execFile('true')", added <= 2, `${added.toFixed(2)} ms (includes bash -lc${info.available ? " and the bubblewrap sandbox" : ""})`);
} finally {
  await runner.stop();
  await server.close();
  await rm(dir, { recursive: true, force: true });
  await rm(home, { recursive: true, force: true });
}
