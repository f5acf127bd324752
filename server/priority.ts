// Scheduling priority of the server's threads. The main thread relays every streamed token to
// the browsers; every other thread of the process can wait: V8's helpers (parallel and
// concurrent garbage collection, background compiling), libuv's pool, and our own worker
// threads (the event writer, the query thread). On a machine whose cores are all busy, Linux
// runs the thread with the lower nice value first, so the helpers are given higher ones and
// the main thread stops queueing behind them. Linux only (a thread's nice value is its own
// there); elsewhere, or where it is refused, nothing changes.
// A thread's end waits for every background task of the process (NodePlatform::DrainTasks), the
// lowered helpers' included, so the server gives them their priority back as it stops.
// Measured with the token-latency benchmark at 50 sessions on a 2-core machine (three runs
// each way, BENCH_KEEP_PRIORITY=1 for the old way): the main thread waited for a CPU 7-8% of
// the time instead of 9-11%, and the median added p99 fell from 4.2 to 2.6 ms (Anthropic) and
// from 3.4 to 2.0 ms (OpenAI).
import { readdirSync, readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { isMainThread } from "node:worker_threads";

/** How much lower than the main thread V8's and libuv's helpers run. */
export const HELPER_NICE = 19;
/** Our own worker threads: lower, but not so low that a saturated machine starves their writes. */
export const WORKER_NICE = 10;

/** The nice value `offset` below the main thread's (nice values stop at 19). */
const below = (offset: number) => Math.min(19, getPriority(process.pid) + offset);

/** Called by one of our worker threads: lowers its own priority (WORKER_NICE). */
export function yieldToMainThread(offset = WORKER_NICE): void {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isInteger(tid) || tid <= 0 || tid === process.pid) return;
    const target = below(offset);
    if (getPriority(tid) < target) setPriority(tid, target);
  } catch {
    // No /proc, or not allowed: the thread keeps the process's priority.
  }
}

/**
 * From the main thread: sets each other thread of the process that `pick` chooses (given its
 * nice value and the main thread's) to the nice value `pick` returns. Returns how many it set;
 * a thread that has ended or may not be set is passed over.
 */
function setOtherThreads(pick: (nice: number, main: number) => number | undefined): number {
  if (!isMainThread) return 0;
  let tids: string[];
  try {
    tids = readdirSync("/proc/self/task");
  } catch {
    return 0;
  }
  const main = getPriority(process.pid);
  let set = 0;
  for (const tid of tids.map(Number)) {
    if (tid === process.pid) continue;
    try {
      const target = pick(getPriority(tid), main);
      if (target === undefined) continue;
      setPriority(tid, target);
      set++;
    } catch {
      // The thread has ended, or the change was refused.
    }
  }
  return set;
}

/**
 * Called by the main thread once it is serving: lowers every other thread of the process that
 * still runs at its priority (V8's and libuv's helpers; our workers have lowered themselves
 * already, or will once they have answered their first request). Returns how many threads were lowered.
 */
export function lowerHelperThreads(offset = HELPER_NICE): number {
  const target = below(offset);
  // A thread below the main thread already is a worker that lowered itself.
  return setOtherThreads((nice, main) => (nice === main ? target : undefined));
}

/**
 * Called by the main thread as the server stops: every other thread back at the main thread's
 * priority, where Linux allows it (a lower nice value takes root, CAP_SYS_NICE or RLIMIT_NICE;
 * a thread refused finishes at its own pace). The query thread's end waits for V8's background
 * work (NodePlatform::DrainTasks): on a saturated 2-core machine a TurboFan compile of its
 * Prisma WebAssembly, at nice 19, held that end, and the server's stop, for over five minutes.
 * Returns how many threads were raised.
 */
export function restoreThreadPriorities(): number {
  return setOtherThreads((nice, main) => (nice > main ? main : undefined));
}
