// The dispatch pipeline (issue 5), two measurements on SQLite:
// 1. Batching: 10 read-only calls of ~20 ms each through the whole pipeline (plan, records,
//    events, RW lock, batch of 10) to a real runner process running `sleep 0.02`. The tool is a
//    read-only, concurrency-safe wrapper around the real shell tool's execute: the shell tool
//    itself does not class `sleep` as read-only. Goal: batch wall time ≤ 1.2× the slowest call
//    of the batch (p50 over rounds). Also printed: one call alone and the sum (serial) baseline;
//    and one call alone against its own runner round trip (the pool's run of the same command,
//    timed inside the call), issue 31 goal 4: the pipeline adds ≤ 2 ms at p50. The database is
//    the server's: queries and turn rows on the query thread (db/query-thread.ts), a tool call's
//    rows in the main thread (db/turn-rows/calls-here.ts).
// 2. Truncation + spill of 1 MB and 10 MB shell output to a model-ready result (encode, cut on
//    UTF-8 boundaries, sha256, store, render), against a bare better-sqlite3 insert of the same
//    bytes in the same run. Goals: ≤ 15 ms and ≤ 100 ms at p50.
import Database from "better-sqlite3";
import { z } from "zod";
import { createTestDb } from "../server/testing/db";
import { openDb } from "../server/db";
import { createSpillStore } from "../server/services/spills";
import { cutAndSpill } from "../server/pipeline/finish";
import { createPipeline } from "../server/pipeline";
import { createPolicyService } from "../server/services/policies";
import { createExecutorRouter } from "../server/executors/router";
import { seedSession, toolStates } from "../server/testing/pipeline";
import { spawnRunner, startServer, tempDir, waitFor } from "../server/testing/runner";
import { shellTool } from "../server/tools/builtin/shell";
import { defineTool } from "../server/tools/tool";
import type { SessionEventBody } from "../server/protocol/events";
import { goal, median, percentile, printTable, ratio } from "./lib";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const db = await createTestDb("sqlite");
const spills = createSpillStore(db.db, db.url);
const log = { warn: () => undefined, error: (m: string, e?: unknown) => console.error(m, e) };

async function batching() {
  // As the server opens it: Prisma's queries and the turn rows on the query thread, the call rows here.
  const threaded = await openDb(db.url, { thread: true });
  const dir = await tempDir("quiver-bench-");
  const server = await startServer();
  const runner = spawnRunner({ url: server.url, workspace: dir });
  try {
    await waitFor(() => server.pool.status().some((r) => r.connected), 180_000, "runner to connect"); // slow on a busy machine
    const sleeper = defineTool({
      name: "shell",
      description: "bench: sleep on the runner",
      input: z.object({ command: z.string() }),
      capabilities: [],
      executor: "runner",
      isReadOnly: () => true,
      isConcurrencySafe: () => true,
      async execute(input, ctx) {
        const parsed = shellTool.parse(input);
        if (!parsed.ok) throw new Error(parsed.error);
        // The runner runs at most 8 commands per session at once (runner/exec/shell.ts), so each
        // call addresses its own runner session; the pipeline side is unchanged.
        const own = `${ctx.sessionId}:${ctx.callId}`;
        return shellTool.execute(parsed.value, {
          ...ctx,
          remote: async (i, o = {}) => {
            runnerInput = i;
            const start = performance.now();
            try {
              return await server.pool.run({
                sessionId: own,
                callId: ctx.callId,
                op: "shell",
                input: i,
                deadline: Date.now() + (o.timeoutMs ?? 60_000),
                signal: ctx.signal,
              });
            } finally {
              roundTrips.set(ctx.callId, performance.now() - start);
            }
          },
        });
      },
    });
    // What the shell tool sends the runner: the bare round trip below sends the same.
    let runnerInput: unknown;
    // Each call's own runner round trip, by call id: what the pipeline adds is the rest of its wall time.
    const roundTrips = new Map<string, number>();
    const events: SessionEventBody[] = [];
    const pipeline = createPipeline({
      db: threaded.db,
      rows: threaded.rows,
      provider: "sqlite",
      tools: toolStates([sleeper]),
      executors: createExecutorRouter({ runner: server.pool }),
      policies: createPolicyService(threaded.db),
      spills,
      log,
    });
    const dispatch = async (n: number, tag: string) => {
      const { session, user } = await seedSession(threaded.db);
      const turn = await threaded.db.turn.create({ data: { sessionId: session.id } });
      const mine: SessionEventBody[] = [];
      const start = performance.now();
      const out = await pipeline.dispatch({
        sessionId: session.id,
        turnId: turn.id,
        actorId: user.id,
        strict: false,
        signal: new AbortController().signal,
        calls: Array.from({ length: n }, (_, i) => ({
          providerCallId: `c${i}`,
          name: "shell",
          rawArguments: JSON.stringify({ command: `sleep 0.02 && echo ${tag}-${i}` }),
        })),
        emit: (e) => void mine.push(e),
      });
      const wall = performance.now() - start;
      if (out.results.some((r) => r.isError))
        throw new Error(`bench call failed: ${out.results.find((r) => r.isError)!.content}`);
      events.push(...mine);
      const durations = mine.flatMap((e) => (e.type === "tool.finished" ? [e.durationMs] : []));
      const trips = mine.flatMap((e) => (e.type === "tool.started" ? [roundTrips.get(e.callId) ?? NaN] : []));
      return {
        wall,
        own: wall - Math.max(...trips),
        slowest: Math.max(...durations),
        sum: durations.reduce((a, b) => a + b, 0),
      };
    };
    // The floor: the runner round trip of the same command, straight to the runner pool.
    const bareCall = async (r: number) => {
      const start = performance.now();
      const out = await server.pool.run({
        sessionId: `bare-${r}`,
        callId: `bare-${r}`,
        op: "shell",
        input: runnerInput,
        deadline: Date.now() + 60_000,
        signal: new AbortController().signal,
      });
      if (!out.ok) throw new Error(`bare call failed: ${out.output}`);
      return performance.now() - start;
    };
    await dispatch(10, "warm");
    await bareCall(-1);
    const solo: number[] = [];
    const soloOwn: number[] = [];
    const bare: number[] = [];
    const batch: { wall: number; slowest: number; sum: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      bare.push(await bareCall(r));
      const one = await dispatch(1, `solo${r}`);
      solo.push(one.wall);
      soloOwn.push(one.own);
      batch.push(await dispatch(10, `batch${r}`));
    }
    pipeline.dispose();
    const ratios = batch.map((b) => b.wall / b.slowest);
    printTable(
      `10 read-only calls of sleep 0.02 on a real runner, batched (${ROUNDS} rounds, p50)`,
      ["case", { title: "p50 ms" }, { title: "vs slowest call" }],
      [
        [
          "one call, bare runner round trip  [floor]",
          median(bare),
          ratio(median(bare), median(batch.map((b) => b.slowest))),
        ],
        ["one call alone, whole pipeline", median(solo), ratio(median(solo), median(batch.map((b) => b.slowest)))],
        ["  of which the pipeline's own (wall − its round trip)", median(soloOwn), ""],
        ["slowest call within the batch", median(batch.map((b) => b.slowest)), "1.00x"],
        ["batch of 10, wall time", median(batch.map((b) => b.wall)), `${median(ratios).toFixed(2)}x`],
        [
          "sum of the 10 calls (serial baseline)",
          median(batch.map((b) => b.sum)),
          ratio(median(batch.map((b) => b.sum)), median(batch.map((b) => b.slowest))),
        ],
      ],
    );
    goal(
      "#31.4 batch of 10 read-only calls ≤ 1.2× the slowest call (p50)",
      median(ratios) <= 1.2,
      `${median(ratios).toFixed(2)}x`,
    );
    // The floor of one call is its own runner round trip, timed inside the call (the runner's time
    // for a fresh sandbox varies by tens of ms between calls on a busy machine, so a separate bare
    // call is too noisy a floor for a 2 ms goal); the bare call before each round is printed above
    // and paired below as a cross-check.
    const paired = median(solo.map((s, i) => s - bare[i]));
    goal(
      "#31.4 one call's pipeline overhead over the bare runner round trip ≤ 2 ms (p50)",
      median(soloOwn) <= 2,
      `${median(soloOwn).toFixed(2)} ms over the call's own round trip (paired with the bare call before it: ${paired.toFixed(1)} ms, ${median(solo).toFixed(1)} against ${median(bare).toFixed(1)} ms)`,
    );
  } finally {
    await runner.stop();
    await server.close();
    await threaded.close();
  }
}

async function spilling() {
  const { session } = await seedSession(db.db);
  const bare = new Database(db.url.replace(/^file:/, "").replace(/test\.db$/, "bare.db"));
  bare.pragma("journal_mode = WAL");
  bare.exec("CREATE TABLE blobs (id TEXT PRIMARY KEY, bytes BLOB NOT NULL)");
  const insert = bare.prepare("INSERT INTO blobs VALUES (?, ?)");
  const line = "2026-11-30T01:00:00Z INFO compiling module ✓ ".padEnd(99, "x") + "\n";
  const rows: (string | number)[][] = [];
  for (const [label, size, runs, target] of [
    ["1 MB", 1 << 20, 30, 15],
    ["10 MB", 10 << 20, 10, 100],
  ] as const) {
    // Flattened through JSON as it arrives from the runner (a repeat/slice rope would add a
    // flattening pass that real outputs never pay).
    const output = JSON.parse(
      JSON.stringify(line.repeat(Math.ceil(size / Buffer.byteLength(line))).slice(0, size)),
    ) as string;
    const bytes = Buffer.from(output);
    const ours: number[] = [];
    const base: number[] = [];
    for (let i = 0; i < runs + 2; i++) {
      let t = performance.now();
      const fin = await cutAndSpill(
        { output, kind: "shell" },
        { sessionId: session.id, toolCallId: `bench-${i}`, spills, log },
      );
      const a = performance.now() - t;
      if (!fin.spillRef) throw new Error("spill failed");
      t = performance.now();
      insert.run(`${label}-${i}`, bytes);
      const b = performance.now() - t;
      if (i >= 2) {
        ours.push(a);
        base.push(b);
      }
    }
    const p50a = percentile(Float64Array.from(ours).sort(), 50);
    const p50b = percentile(Float64Array.from(base).sort(), 50);
    rows.push([`${label}: bare better-sqlite3 insert  [baseline]`, p50b, "1.00x"]);
    rows.push([`${label}: cut + spill → model-ready result`, p50a, ratio(p50a, p50b)]);
    const note = p50b > target ? "; the bare insert alone is over the goal on this machine right now" : "";
    goal(
      `truncation + spill of ${label} ≤ ${target} ms p50 on SQLite`,
      p50a <= target,
      `${p50a.toFixed(1)} ms, ${ratio(p50a, p50b)} a bare insert (${p50b.toFixed(1)} ms)${note}`,
    );
  }
  bare.close();
  printTable(
    "shell output cut to 30 KB for the model, full bytes spilled (SQLite)",
    ["case", { title: "p50 ms" }, { title: "vs bare insert" }],
    rows,
  );
}

try {
  if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === "batch") await batching();
  if (!process.env.BENCH_ONLY || process.env.BENCH_ONLY === "spill") await spilling();
} finally {
  await spills.close();
  await db.dispose();
}
