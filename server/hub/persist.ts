// Write-behind of numbered events: every session's events queue here and are written to
// SessionEvent in order, all sessions together, one batch per short window (event-store.ts),
// so a busy server pays one write per window instead of one per token. Until an event's write
// commits it stays readable from `unwritten(sessionId)`; that is how a resuming subscriber
// sees it. A batch the database keeps refusing is tried again one session at a time, so a session
// deleted with events in flight (its rows' foreign key fails) costs only its own events. A
// database that refuses every write is logged once, with a count when it recovers.
import type { SessionEvent } from "../protocol/events";
import type { EventStore } from "./event-store";

export interface EventWriter {
  push(ev: SessionEvent, resolve: (ev: SessionEvent) => void, reject: (err: unknown, ev: SessionEvent) => void): void;
  /** A session's events numbered but not yet committed, in seq order (a copy). */
  unwritten(sessionId: string): SessionEvent[];
  /** Resolves when the session has no event waiting to be written (others may). */
  settled(sessionId: string): Promise<void>;
  /** Resolves when every event of the session pushed so far is written or given up on (later
   *  ones may still wait: a session that keeps streaming is not waited out). */
  written(sessionId: string): Promise<void>;
  /** Resolves when everything pushed so far is written (or given up on). */
  drain(): Promise<void>;
  /** Drains, then closes the store. */
  close(): Promise<void>;
}

interface Item {
  ev: SessionEvent;
  resolve(ev: SessionEvent): void;
  reject(err: unknown, ev: SessionEvent): void;
}

const ATTEMPTS = 3;

/** A failing database is said once when it starts failing and once, with the count, when a
 *  write succeeds again: not a line per batch (a streaming turn writes 50 a second). */
function faultReport(log: (m: string, e?: unknown) => void) {
  let lost = 0;
  let batches = 0;
  return {
    failing: () => batches > 0,
    failed(count: number, err: unknown) {
      if (batches === 0) log(`event(s) could not be written; later failures are counted until a write succeeds`, err);
      lost += count;
      batches++;
    },
    ok() {
      if (batches === 0) return;
      log(`events are written again; ${lost} event(s) in ${batches} batch(es) could not be written meanwhile`);
      lost = batches = 0;
    },
  };
}

export function eventWriter(
  store: EventStore,
  opts: { batchSize: number; delayMs: number; log: (m: string, e?: unknown) => void },
): EventWriter {
  const queue: Item[] = [];
  const pending = new Map<string, SessionEvent[]>();
  const onSettled = new Map<string, (() => void)[]>();
  /** written(): by session, the event each waiter waits for (the last one pushed when it asked). */
  const onWritten = new Map<string, { last: SessionEvent; wake: () => void }[]>();
  let writing: Promise<void> | undefined;
  const report = faultReport(opts.log);

  async function run() {
    while (queue.length > 0) {
      if (opts.delayMs > 0 && queue.length < opts.batchSize) await new Promise((r) => setTimeout(r, opts.delayMs));
      const batch = queue.slice(0, opts.batchSize);
      let error: unknown;
      // While the database refuses everything (disk full, read-only) one try a batch: retries
      // would only hold every later event back.
      for (let attempt = 1; attempt <= (report.failing() ? 1 : ATTEMPTS); attempt++) {
        try {
          await store.insert(batch.map((b) => b.ev));
          error = undefined;
          break;
        } catch (err) {
          error = err;
          await new Promise((r) => setTimeout(r, 50 * attempt));
        }
      }
      const failed = error === undefined ? new Map<Item, unknown>() : await bySession(batch, error);
      // Only now may the events leave the readable tail.
      queue.splice(0, batch.length);
      for (const { ev } of batch) {
        const list = pending.get(ev.sessionId)!;
        list.shift();
        const waiters = onWritten.get(ev.sessionId);
        if (waiters && (list.length === 0 || waiters.some((w) => w.last === ev))) {
          const still = waiters.filter((w) => (list.length > 0 && w.last !== ev) || (w.wake(), false));
          if (still.length > 0) onWritten.set(ev.sessionId, still);
          else onWritten.delete(ev.sessionId);
        }
        if (list.length === 0) {
          pending.delete(ev.sessionId);
          for (const wake of onSettled.get(ev.sessionId) ?? []) wake();
          onSettled.delete(ev.sessionId);
        }
      }
      if (failed.size > 0) report.failed(failed.size, [...failed.values()][0]);
      else report.ok();
      for (const b of batch) {
        if (failed.has(b)) b.reject(failed.get(b), b.ev);
        else b.resolve(b.ev);
      }
    }
    writing = undefined;
  }

  /** The refused batch again, each session's events in a write of their own: what fails now. */
  async function bySession(batch: Item[], error: unknown): Promise<Map<Item, unknown>> {
    const groups = new Map<string, Item[]>();
    for (const b of batch) {
      const items = groups.get(b.ev.sessionId);
      if (items) items.push(b);
      else groups.set(b.ev.sessionId, [b]);
    }
    const failed = new Map<Item, unknown>();
    if (groups.size === 1) {
      for (const b of batch) failed.set(b, error);
      return failed;
    }
    for (const items of groups.values()) {
      try {
        await store.insert(items.map((b) => b.ev));
      } catch (err) {
        for (const b of items) failed.set(b, err);
      }
    }
    return failed;
  }

  return {
    push(ev, resolve, reject) {
      queue.push({ ev, resolve, reject });
      let list = pending.get(ev.sessionId);
      if (!list) pending.set(ev.sessionId, (list = []));
      list.push(ev);
      writing ??= run();
    },
    unwritten: (sessionId) => [...(pending.get(sessionId) ?? [])],
    settled: (sessionId) =>
      pending.has(sessionId)
        ? new Promise<void>((r) => {
            const list = onSettled.get(sessionId);
            if (list) list.push(r);
            else onSettled.set(sessionId, [r]);
          })
        : Promise.resolve(),
    written(sessionId) {
      const last = pending.get(sessionId)?.at(-1);
      if (!last) return Promise.resolve();
      return new Promise<void>((wake) => {
        const list = onWritten.get(sessionId);
        if (list) list.push({ last, wake });
        else onWritten.set(sessionId, [{ last, wake }]);
      });
    },
    async drain() {
      while (writing) await writing;
    },
    async close() {
      await this.drain();
      await store.close();
    },
  };
}
