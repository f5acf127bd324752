// Starts one of the server's worker threads from its TypeScript entry. Worker threads do not
// inherit the tsx loader of the main thread (Node 20): the thread tries its entry, and when
// Node cannot load it, registers tsx and loads it again (a new URL: the failed load stays
// cached). Under the compiled build of `npm start` the thread loads its compiled entry and the
// first import simply succeeds.
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { scoped } from "../log";
import { compiledEntry } from "../build/compiled";
import { adoptEarlyThread, THREAD_BOOT } from "../build/early.mjs";

// The ESM build: tsx's CommonJS API cannot register hooks from a worker thread.
const tsx = pathToFileURL(
  createRequire(import.meta.url)
    .resolve("tsx/esm/api")
    .replace(/\.cjs$/, ".mjs"),
).href;

/** The `workerData` of a thread on `entry`: `data`, with the entry to load and tsx's loader. */
function threadData(entry: URL, data: Record<string, unknown>): Record<string, unknown> {
  const compiled = compiledEntry(fileURLToPath(entry));
  return { ...data, entry: compiled ? pathToFileURL(compiled).href : entry.href, tsx };
}

/** `data` reaches the thread as its `workerData` (beside `entry` and `tsx`). A thread start.mjs
 *  started early on the same data (build/early.mjs) is taken instead of a new one. */
export function startThread(entry: URL, data: Record<string, unknown>): Worker {
  const workerData = threadData(entry, data);
  return adoptEarlyThread(workerData) ?? new Worker(THREAD_BOOT, { eval: true, workerData });
}

/** A thread answering numbered requests: `{ id, ok: true, … }` or `{ id, ok: false, … }`. */
export interface ThreadClient<Reply> {
  /** Sends `message` with a fresh `id`; resolves with the reply (`ok: true`), rejects otherwise. */
  request(message: (id: number) => object): Promise<Extract<Reply, { ok: true }>>;
  /** Lets the requests out finish, then stops the thread (a later request starts it again). */
  close(): Promise<void>;
  /** Stops the thread at once, as a crash would: the requests out fail. */
  terminate(): Promise<void>;
}

/** How long `close` lets a thread finish the requests out before stopping it, and how long it
 *  then waits for the thread's end. */
export interface CloseTiming {
  finishMs: number;
  endMs: number;
}
const CLOSE_TIMING: CloseTiming = { finishMs: 5_000, endMs: 10_000 };

/**
 * The main thread's side of a request/reply thread (event writer, query thread). The thread is
 * started on first use and again after a crash, which fails the requests it had; it is
 * referenced only while a request is out, so an idle thread never holds the process open and
 * a pending request always does. `failure` turns an `ok: false` reply into the error to throw.
 */
export function threadClient<Reply extends { id: number; ok: boolean }>(
  entry: URL,
  data: Record<string, unknown>,
  what: string,
  failure: (reply: Extract<Reply, { ok: false }>) => Error,
  timing: CloseTiming = CLOSE_TIMING,
): ThreadClient<Reply> {
  const inflight = new Map<number, { resolve(r: Reply): void; reject(err: Error): void }>();
  let worker: Worker | undefined;
  let nextId = 1;

  const fail = (w: Worker, err: Error) => {
    if (worker === w) worker = undefined;
    for (const p of inflight.values()) p.reject(err);
    inflight.clear();
  };

  function thread(): Worker {
    if (worker) return worker;
    const w = startThread(entry, data);
    w.unref();
    w.on("message", (r: Reply) => {
      const p = inflight.get(r.id);
      inflight.delete(r.id);
      if (inflight.size === 0) w.unref();
      if (r.ok) p?.resolve(r);
      else p?.reject(failure(r as Extract<Reply, { ok: false }>));
    });
    w.on("error", (err) => fail(w, err));
    w.on("exit", (code) => fail(w, new Error(`${what} exited (code ${code})`)));
    return (worker = w);
  }

  return {
    request(message) {
      const w = thread();
      const id = nextId++;
      return new Promise((resolve, reject) => {
        inflight.set(id, { resolve: resolve as (r: Reply) => void, reject });
        w.ref();
        w.postMessage(message(id));
      });
    },
    async close() {
      const w = worker;
      if (!w) return;
      worker = undefined;
      const exited = new Promise<boolean>((r) => w.once("exit", () => r(true)));
      w.postMessage({ type: "close" });
      const stop = setTimeout(() => void w.terminate(), timing.finishMs);
      // A thread stopped and still not ended waits for the process's V8 background work, which
      // Node finishes before any thread ends (priority.ts), or is in native code, which cannot
      // be stopped: the caller's stop goes on without it.
      let giveUp: NodeJS.Timeout | undefined;
      const ended = await Promise.race([
        exited,
        new Promise<boolean>((r) => (giveUp = setTimeout(() => r(false), timing.finishMs + timing.endMs))),
      ]);
      clearTimeout(stop);
      clearTimeout(giveUp);
      if (!ended) scoped("db").warn(`${what} did not end ${timing.endMs} ms after it was stopped; going on without it`);
    },
    async terminate() {
      await worker?.terminate();
    },
  };
}
