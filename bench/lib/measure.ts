// Timing helpers for benchmarks: run a function until a time budget is spent (after a warm-up)
// and report per-operation figures, or time single calls for latency percentiles.
import { performance } from "node:perf_hooks";

export interface Throughput {
  iterations: number;
  totalMs: number;
  /** Mean time per iteration, in nanoseconds. */
  nsPerOp: number;
}

/**
 * Calls fn repeatedly for about minMs (after warmupMs of untimed calls), split into `rounds`
 * rounds; reports the fastest round, so time the process spent preempted by others on a shared
 * machine counts as little as possible. Every row of a table is measured the same way.
 */
export function throughput(
  fn: () => void,
  opts: { minMs?: number; warmupMs?: number; rounds?: number } = {},
): Throughput {
  const { minMs = 1000, warmupMs = 200, rounds = 5 } = opts;
  const warmEnd = performance.now() + warmupMs;
  while (performance.now() < warmEnd) fn();
  let best: Throughput | undefined;
  for (let r = 0; r < rounds; r++) {
    const t = timedRound(fn, minMs / rounds);
    if (!best || t.nsPerOp < best.nsPerOp) best = t;
  }
  return best!;
}

function timedRound(fn: () => void, minMs: number): Throughput {
  let iterations = 0;
  const start = performance.now();
  let now = start;
  // check the clock every few calls: the clock itself is not free
  let batch = 1;
  while (now - start < minMs) {
    for (let i = 0; i < batch; i++) fn();
    iterations += batch;
    now = performance.now();
    if (now - start < minMs / 20) batch *= 2;
  }
  const totalMs = now - start;
  return { iterations, totalMs, nsPerOp: (totalMs * 1e6) / iterations };
}

/** Times each call separately; returns sorted durations in microseconds. */
export function latencies(calls: number, fn: (i: number) => void, warmup = Math.min(calls, 200)): Float64Array {
  for (let i = 0; i < warmup; i++) fn(i);
  const out = new Float64Array(calls);
  for (let i = 0; i < calls; i++) {
    const t = process.hrtime.bigint();
    fn(i);
    out[i] = Number(process.hrtime.bigint() - t) / 1000;
  }
  return out.sort();
}

/** Nearest-rank percentile of sorted values (p in 0..100). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

/** The nearest-rank median of values in any order (the lower middle one of an even count). */
export function median(values: ArrayLike<number>): number {
  return percentile(Float64Array.from(values).sort(), 50);
}

export function timeOnce<T>(fn: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = fn();
  return { value, ms: performance.now() - start };
}
