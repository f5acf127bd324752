// Where the hub's write-behind (persist.ts) puts numbered events: SessionEvent rows, a batch per
// call, written by a worker thread of its own (event-store-worker.ts) through the database
// driver (event-rows.ts), never through Prisma's per-query compiler. The main thread, which
// carries the tokens, pays one postMessage per batch and nothing per row.
// On SQLite the thread's write transaction briefly holds the file's write lock; a Prisma write
// on the main thread that comes at that moment waits in SQLite's busy handler. Measured, that
// costs the main thread less than doing the INSERTs itself (every batch, several ms under load).
import type { Worker } from "node:worker_threads";
import { startThread } from "../db/thread";
import type { SessionEvent } from "../protocol/events";
import type { EventRows } from "./event-rows";

export type EventStore = EventRows;

// Messages between the hub and its writer thread (one process, one code base: typed, not parsed).
export type StoreRequest =
  | { type: "insert"; id: number; events: SessionEvent[]; notifyFrom?: string }
  | { type: "notify"; id: number; channel: string; payloads: string[] }
  | { type: "close" };
export type StoreReply = { id: number; ok: true } | { id: number; ok: false; message: string };

/** The store the server uses for a database URL (`file:…` or `postgresql://…`). */
export const eventStoreFor = (url: string): EventStore => workerEventStore(url);

export interface WorkerStoreOptions {
  /** Read per batch: the instance id to NOTIFY the batch as, or none when no peer listens. */
  notifyFrom?: () => string | undefined;
}

export function workerEventStore(url: string, options: WorkerStoreOptions = {}): EventStore {
  const entry = new URL("./event-store-worker.ts", import.meta.url);
  const inflight = new Map<number, { resolve(): void; reject(err: Error): void }>();
  let worker: Worker | undefined;
  let nextId = 1;

  const fail = (w: Worker, err: Error) => {
    if (worker === w) worker = undefined;
    for (const p of inflight.values()) p.reject(err);
    inflight.clear();
  };

  // Started on first use and again after a crash; referenced only while a write is out, so an
  // idle store never holds the process open and a pending write always does.
  function thread(): Worker {
    if (worker) return worker;
    const w = startThread(entry, { url });
    w.unref();
    w.on("message", (r: StoreReply) => {
      const p = inflight.get(r.id);
      inflight.delete(r.id);
      if (inflight.size === 0) w.unref();
      if (r.ok) p?.resolve();
      else p?.reject(new Error(r.message));
    });
    w.on("error", (err) => fail(w, err));
    w.on("exit", (code) => fail(w, new Error(`the event writer thread exited (code ${code})`)));
    return (worker = w);
  }

  function request(req: (id: number) => StoreRequest): Promise<void> {
    const w = thread();
    const id = nextId++;
    return new Promise<void>((resolve, reject) => {
      inflight.set(id, { resolve, reject });
      w.ref();
      w.postMessage(req(id));
    });
  }

  return {
    insert: (events, notifyFrom = options.notifyFrom?.()) => request((id) => ({ type: "insert", id, events, notifyFrom })),
    notify: (channel, payloads) => request((id) => ({ type: "notify", id, channel, payloads })),
    async close() {
      const w = worker;
      if (!w) return;
      worker = undefined;
      const exited = new Promise((r) => w.once("exit", r));
      w.postMessage({ type: "close" } satisfies StoreRequest);
      const timer = setTimeout(() => void w.terminate(), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
