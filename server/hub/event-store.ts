// Where the hub's write-behind (persist.ts) puts numbered events: SessionEvent rows, a batch per
// call, written by a worker thread of its own (event-store-worker.ts) through the database
// driver (event-rows.ts), never through Prisma's per-query compiler. The main thread, which
// carries the tokens, pays one postMessage per batch and nothing per row; a run of deltas
// (delta-run.ts) crosses as its text and lengths, and becomes rows on the thread.
// On SQLite the thread's write transaction briefly holds the file's write lock; a query-thread
// write that comes at that moment waits in SQLite's busy handler, off the main thread.
import { FAULT_NAME } from "../db/faults";
import { threadClient } from "../db/thread";
import type { SessionEvent } from "../protocol/events";
import type { EventRows } from "./event-rows";
import type { DeltaRun } from "./delta-run";

export type EventStore = EventRows;

// Messages between the hub and its writer thread (one process, one code base: typed, not parsed).
export type StoreRequest =
  | { type: "insert"; id: number; events: ReadonlyArray<SessionEvent | DeltaRun>; notifyFrom?: string }
  | { type: "notify"; id: number; channel: string; payloads: string[] }
  | { type: "close" };
export type StoreReply =
  { id: number; ok: true } | { id: number; ok: false; message: string; fault?: { code: string; detail: string } };

/** The store the server uses for a database URL (`file:…` or `postgresql://…`). */
export const eventStoreFor = (url: string): EventStore => workerEventStore(url);

export interface WorkerStoreOptions {
  /** Read per batch: the instance id to NOTIFY the batch as, or none when no peer listens. */
  notifyFrom?: () => string | undefined;
}

export function workerEventStore(url: string, options: WorkerStoreOptions = {}): EventStore {
  const thread = threadClient<StoreReply>(
    new URL("./event-store-worker.ts", import.meta.url),
    { url },
    "the event writer thread",
    (r) =>
      // A database fault keeps its name and code across the thread (db/faults.ts: isDatabaseFault).
      r.fault ? Object.assign(new Error(r.message), { name: FAULT_NAME, ...r.fault }) : new Error(r.message),
  );
  return {
    insert: (events, notifyFrom = options.notifyFrom?.()) =>
      thread.request((id) => ({ type: "insert", id, events, notifyFrom }) satisfies StoreRequest).then(() => undefined),
    notify: (channel, payloads) =>
      thread.request((id) => ({ type: "notify", id, channel, payloads }) satisfies StoreRequest).then(() => undefined),
    close: () => thread.close(),
  };
}
