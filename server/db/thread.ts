// Starts one of the server's worker threads from its TypeScript entry. Worker threads do not
// inherit the tsx loader of the main thread (Node 20): the thread tries its entry, and when
// Node cannot load it, registers tsx and loads it again (a new URL: the failed load stays
// cached). Under a compiled build the first import simply succeeds.
import { readlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { setPriority } from "node:os";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

const boot = `
const { workerData } = require("node:worker_threads");
import(workerData.entry).catch(async (err) => {
  if (err?.code !== "ERR_UNKNOWN_FILE_EXTENSION") throw err;
  (await import(workerData.tsx)).register();
  await import(workerData.entry + "?tsx");
});`;

// The ESM build: tsx's CommonJS API cannot register hooks from a worker thread.
const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx/esm/api").replace(/\.cjs$/, ".mjs")).href;

/** `data` reaches the thread as its `workerData` (beside `entry` and `tsx`). */
export function startThread(entry: URL, data: Record<string, unknown>): Worker {
  return new Worker(boot, { eval: true, workerData: { ...data, entry: entry.href, tsx } });
}

/**
 * Called by a thread whose work can wait (database writes, query compiling): lowers its own
 * scheduling priority, so on a busy machine the main thread, which relays tokens, runs first
 * and this thread takes the cycles left over. Linux only (a thread's nice value is its own
 * there); elsewhere a no-op.
 */
export function yieldToMainThread(nice = 10): void {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, nice);
  } catch {
    // No /proc, or not allowed: the thread keeps the process's priority.
  }
}
