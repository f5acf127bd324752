// What open, idle IDE pages cost one server: 1,000 sockets (BENCH_IDLE), each following an
// idle session's events over tRPC WebSocket as a page does, held by a process of their own.
// Figures: the server's RSS and heap per idle subscriber (after a forced full collection, node
// --expose-gc), and the latency an active session's tokens gain while they are connected:
// ACTIVE sessions (10) stream 3 turns of 120 tokens each (one every 15 ms) without the idle
// pages, with them, and without them again, in one run; the baseline is both runs without.
// Goals: at most 50 KB of RSS per idle subscriber; added p50 at most 0.3 ms and added p99 at
// most 1 ms. Same processes as the token-latency benchmark (bench/lib/token-latency/), SQLite.
//   npm run bench -- idle-subscribers
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { goal, percentile, printTable } from "./lib";
import { ROUNDS, startChild, TOKENS, type Child } from "./lib/token-latency/ipc";

const IDLE = Number(process.env.BENCH_IDLE ?? 1000);
const ACTIVE = Number(process.env.BENCH_IDLE_ACTIVE ?? 10);
const KB = 1024;

/** Milliseconds from each token's write at the fake provider to its arrival at a client. */
function latencies(sent: [string, number][], arrived: [string, number][]): number[] {
  const at = new Map(sent);
  const out: number[] = [];
  for (const [token, t] of arrived) {
    const s = at.get(token);
    if (s !== undefined) out.push((t - s) / 1e6);
  }
  return out;
}
const sorted = (l: number[]) => Float64Array.from(l).sort();

const dir = mkdtempSync(join(tmpdir(), "quiver-bench-idle-"));
const children: Child[] = [];
try {
  const fake = await startChild("fake");
  children.push(fake);
  const clients = await startChild("client");
  children.push(clients);
  const pages = await startChild("client");
  children.push(pages);
  const server = await startChild(
    "server",
    [`file:${join(dir, "bench.db")}`, fake.ready.anthropicBaseURL!, fake.ready.openaiBaseURL!],
    ["--expose-gc"],
  );
  children.push(server);
  const url = server.ready.url!;
  const idleIds = (await server.ask({ type: "seed", kind: "openai", sessions: IDLE }, "seeded")).sessionIds;
  // Fresh sessions each time: a client that follows a session from its start counts its turns.
  const run = async () => {
    const active = (await server.ask({ type: "seed", kind: "openai", sessions: ACTIVE }, "seeded")).sessionIds;
    await fake.ask({ type: "collect" }, "times");
    const { times } = await clients.ask(
      { type: "engine", url, sessionIds: active, rounds: ROUNDS, staggerMs: TOKENS * 15 },
      "times",
    );
    return latencies((await fake.ask({ type: "collect" }, "times")).times, times);
  };
  // Warm-up: JIT, connections and prepared statements, as in the token-latency benchmark.
  await run();
  const without1 = await run();
  const before = await server.ask({ type: "heap" }, "heap");
  const opening = performance.now();
  await pages.ask({ type: "idle", url, sessionIds: idleIds }, "times");
  const openS = (performance.now() - opening) / 1000;
  const connected = await server.ask({ type: "heap" }, "heap");
  const withIdle = sorted(await run());
  await pages.ask({ type: "release" }, "closed");
  const without = sorted([...without1, ...(await run())]);
  const rssPer = (connected.rss - before.rss) / IDLE;
  const heapPer = (connected.heapUsed - before.heapUsed) / IDLE;
  const [w50, w99, i50, i99] = [
    percentile(without, 50),
    percentile(without, 99),
    percentile(withIdle, 50),
    percentile(withIdle, 99),
  ];
  printTable(
    `Idle subscribers: ${IDLE} open IDE pages on one server, ${ACTIVE} active sessions streaming (${ROUNDS} turns of ${TOKENS} tokens, one every 15 ms; SQLite)`,
    [
      "case",
      { title: "tokens", digits: 0 },
      { title: "p50 ms", digits: 3 },
      { title: "p99 ms", digits: 3 },
      { title: "server RSS MB", digits: 1 },
      { title: "server heap MB", digits: 1 },
    ],
    [
      ["without idle pages", without.length, w50, w99, before.rss / KB / KB, before.heapUsed / KB / KB],
      [`with ${IDLE} idle pages`, withIdle.length, i50, i99, connected.rss / KB / KB, connected.heapUsed / KB / KB],
    ],
  );
  console.log(
    `${IDLE} pages subscribed in ${openS.toFixed(1)} s; per idle subscriber: RSS ${(rssPer / KB).toFixed(1)} KB, heap ${(heapPer / KB).toFixed(1)} KB`,
  );
  goal(
    `#31.6 RSS per idle subscriber ≤ 50 KB`,
    rssPer <= 50 * KB,
    `${(rssPer / KB).toFixed(1)} KB (heap ${(heapPer / KB).toFixed(1)} KB)`,
  );
  goal(
    `#31.6 active tokens' added p50 with ${IDLE} idle pages ≤ 0.3 ms`,
    i50 - w50 <= 0.3,
    `${(i50 - w50).toFixed(3)} ms (${i50.toFixed(3)} against ${w50.toFixed(3)})`,
  );
  goal(
    `#31.6 active tokens' added p99 with ${IDLE} idle pages ≤ 1 ms`,
    i99 - w99 <= 1,
    `${(i99 - w99).toFixed(3)} ms (${i99.toFixed(3)} against ${w99.toFixed(3)})`,
  );
} finally {
  for (const c of children.reverse()) await c.close();
  rmSync(dir, { recursive: true, force: true });
}
