// What `npm start` (server/start.mjs) does before the server's bundle is loaded, so that the
// loading goes on in parallel with the rest. On a 2-core machine a warm start spent its time
// not loading but waiting: for the query thread, which began to load Prisma and compile its
// WebAssembly only once the server's modules and Next.js had loaded on the main thread, and
// for a CPU, taken by V8's helpers compiling that WebAssembly in the background.
// - The query thread starts here at once; the server adopts it only when it asks for the same
//   entry with the same data (db/thread.ts), and a guess that turns out wrong is ended unused.
// - V8's helper threads (they all exist by now) run below the main thread from the start
//   rather than once the server listens (priority.ts).
// Plain JavaScript on purpose: start.mjs runs it before anything is compiled.
import { readdirSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { Worker } from "node:worker_threads";

/** Every other thread of the process `offset` below this one's nice value (Linux; elsewhere nothing). */
export function lowerOtherThreads(offset) {
  let tids = [];
  try {
    tids = readdirSync("/proc/self/task").map(Number);
  } catch {
    return;
  }
  const target = Math.min(19, getPriority(process.pid) + offset);
  for (const tid of tids) {
    if (tid === process.pid) continue;
    try {
      setPriority(tid, target);
    } catch {
      // gone, or not allowed: it keeps its priority
    }
  }
}

/** The code a server thread boots with: its entry, or under tsx its source after registering tsx. */
export const THREAD_BOOT = `
const { workerData } = require("node:worker_threads");
import(workerData.entry).catch(async (err) => {
  if (err?.code !== "ERR_UNKNOWN_FILE_EXTENSION") throw err;
  (await import(workerData.tsx)).register();
  await import(workerData.entry + "?tsx");
});`;

// Shared by this file's copy in start.mjs's module graph and the bundle's copy: one per process.
const state = () => (globalThis[Symbol.for("quiver.earlyThreads")] ??= { threads: new Map(), adopted: 0 });
const registry = () => state().threads;
// tsx's loader is left out: a compiled entry never needs it, and start.mjs does not look it up.
const keyOf = (workerData) =>
  JSON.stringify(
    Object.entries(workerData)
      .filter(([name]) => name !== "tsx")
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );

/** Starts a thread on `workerData` (its `entry` included) now; it does not hold the process open. */
export function startEarlyThread(workerData) {
  const worker = new Worker(THREAD_BOOT, { eval: true, workerData });
  worker.unref();
  // An error before anyone adopts the thread must not be an uncaught one: the thread is dropped.
  const drop = () => {
    early.failed = true;
    if (registry().get(keyOf(workerData)) === early) registry().delete(keyOf(workerData));
  };
  const early = { worker, failed: false, entry: workerData.entry, drop };
  worker.on("error", drop);
  worker.on("exit", drop);
  registry().set(keyOf(workerData), early);
  return worker;
}

/** The thread started early on exactly this `workerData`, handed over once; undefined otherwise. */
export function adoptEarlyThread(workerData) {
  const key = keyOf(workerData);
  const early = registry().get(key);
  if (!early) return undefined;
  registry().delete(key);
  early.worker.off("error", early.drop);
  early.worker.off("exit", early.drop);
  if (early.failed) return undefined;
  state().adopted++;
  return early.worker;
}

/** Ends the early threads nobody adopted (the guess of their data was wrong); returns their entries. */
export function endUnadoptedThreads() {
  const ended = [];
  for (const [key, early] of registry()) {
    registry().delete(key);
    ended.push(String(early.entry));
    void early.worker.terminate();
  }
  return ended;
}

/** How many early threads have been handed over in this process (the server's start log says). */
export function adoptedThreads() {
  return state().adopted;
}
