// Heap a streamed turn keeps per token: one session streams one long reply (100,000 tokens by
// default, one SSE event each, as fast as the server takes them) through the whole server
// (SDK adapter, engine, hub with its database writes, tRPC over WebSocket to a client), and the
// server's heap is read after a forced full collection (node --expose-gc) before the turn, every
// 250 ms during it, and after it. What a turn needs to keep grows with its text (the assistant
// message is written once, at its end); anything more per token is held for nothing.
// Goals: heap retained per token at most twice the token's text bytes (the slope of the heap
// over the tokens streamed, mid-turn), and the turn's heap growth at most 20 MB.
// Same processes as the token-latency benchmark (bench/lib/token-latency/), SQLite.
// BENCH_MEMORY_TOKENS: the reply's length; BENCH_MEMORY_WIRES=openai: one wire format only;
// BENCH_HEAPSNAP=<dir>: a heap snapshot with each sample (slow; to find what a turn holds).
//   npm run bench -- memory-per-token
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { goal, printTable } from "./lib";
import { startChild, type Child } from "./lib/token-latency/ipc";

const TOKENS = Number(process.env.BENCH_MEMORY_TOKENS ?? 100_000);
// The children read these as they start (fork passes this environment on).
process.env.BENCH_TOKENS = String(TOKENS);
process.env.BENCH_DELAY_MS = "0";
const MB = 1024 * 1024;
/** Between two heap samples: a turn on an idle machine streams 20,000 tokens in a few seconds. */
const SAMPLE_MS = 250;
/** Bytes of one token's text as the fake provider streams it ("s00r0t00042 "; lib/token-latency/fake.ts). */
const tokenBytes = `s00r0t${"0".repeat(Math.max(4, String(TOKENS - 1).length))} `.length;

/** Least-squares slope of y over x. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  const num = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  return den === 0 ? NaN : num / den;
}

const dir = mkdtempSync(join(tmpdir(), "quiver-bench-mem-"));
const children: Child[] = [];
try {
  const fake = await startChild("fake");
  children.push(fake);
  const clients = await startChild("client");
  children.push(clients);
  const server = await startChild(
    "server",
    [`file:${join(dir, "bench.db")}`, fake.ready.anthropicBaseURL!, fake.ready.openaiBaseURL!],
    ["--expose-gc"],
  );
  children.push(server);
  const rows: (string | number)[][] = [];
  for (const kind of (process.env.BENCH_MEMORY_WIRES ?? "anthropic,openai").split(",") as ("anthropic" | "openai")[]) {
    const { sessionIds } = await server.ask({ type: "seed", kind, sessions: 1 }, "seeded");
    const before = await server.ask({ type: "heap" }, "heap");
    const samples: { x: number; y: number }[] = [];
    let done = false;
    const turn = clients
      .ask({ type: "engine", url: server.ready.url!, sessionIds, rounds: 1, staggerMs: 0 }, "times")
      .finally(() => (done = true));
    const started = performance.now();
    while (!done) {
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
      if (done) break;
      const h = await server.ask({ type: "heap" }, "heap");
      const streamed = h.textDeltas - before.textDeltas;
      // Mid-turn only: the turn's first tenth still allocates what any turn needs once.
      if (streamed > TOKENS / 10 && streamed < TOKENS) samples.push({ x: streamed, y: h.heapUsed - before.heapUsed });
    }
    const { times } = await turn;
    const wallS = (performance.now() - started) / 1000;
    await fake.ask({ type: "collect" }, "times");
    const after = await server.ask({ type: "heap" }, "heap");
    const streamed = after.textDeltas - before.textDeltas;
    const perToken = samples.length >= 2 ? slope(samples) : NaN;
    const peak = Math.max(0, ...samples.map((s) => s.y));
    const avgText = tokenBytes;
    rows.push([
      kind,
      streamed,
      times.length,
      wallS,
      samples.length,
      before.heapUsed / MB,
      peak / MB,
      (after.heapUsed - before.heapUsed) / MB,
      perToken,
      avgText,
    ]);
    goal(
      `#31.2 ${kind}: heap retained per streamed token ≤ 2× its text bytes`,
      perToken <= 2 * avgText,
      `${perToken.toFixed(1)} B/token against ${avgText.toFixed(1)} B of text (${samples.length} samples mid-turn)`,
    );
    goal(
      `#31.2 ${kind}: a ${TOKENS.toLocaleString("en-US")}-token turn grows the heap ≤ 20 MB per 100,000 tokens`,
      peak <= 20 * MB * (TOKENS / 100_000),
      `${(peak / MB).toFixed(1)} MB at most mid-turn (goal scaled to the turn's length: ${(20 * (TOKENS / 100_000)).toFixed(1)} MB)`,
    );
  }
  printTable(
    `Server heap during one ${TOKENS.toLocaleString("en-US")}-token turn (after a forced full GC each sample; SQLite)`,
    [
      "wire",
      { title: "deltas", digits: 0 },
      { title: "client got", digits: 0 },
      { title: "turn s", digits: 1 },
      { title: "samples", digits: 0 },
      { title: "heap before MB", digits: 1 },
      { title: "peak growth MB", digits: 1 },
      { title: "after − before MB", digits: 1 },
      { title: "B/token", digits: 1 },
      { title: "text B/token", digits: 1 },
    ],
    rows,
  );
} finally {
  for (const c of children.reverse()) await c.close();
  rmSync(dir, { recursive: true, force: true });
}
