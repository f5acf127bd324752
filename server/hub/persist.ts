// Write-behind of numbered events: every session's events queue here and are written to
// SessionEvent in order, all sessions together, one batch per short window (event-store.ts),
// so a busy server pays one write per window instead of one per token. A turn's posted deltas
// wait as runs (delta-run.ts: the text and a length per token, not an event object each), so
// a backlog the writer thread has yet to store holds little more than the tokens' text. Until
// an event's write commits it stays readable from `unwritten(sessionId)`; that is how a
// resuming subscriber sees it. A batch the database keeps refusing is tried again one session
// at a time, so a session deleted with events in flight (its rows' foreign key fails) costs
// only its own events; a batch refused by a constraint goes to that split at once. A session
// whose rows are refused because it was deleted (asked of `gone`) is let go deliberately: its
// events still queued and any published later are dropped unwritten, and nothing is logged, so
// the fault line below means a fault. A database that refuses every write is logged once, with
// a count when it recovers.
import type { SessionEvent } from "../protocol/events";
import type { EventStore } from "./event-store";
import { expandRun, RunBuilder, runnable, type DeltaRun } from "./delta-run";

export interface EventWriter {
  push(ev: SessionEvent, resolve: (ev: SessionEvent) => void, reject: (err: unknown, ev: SessionEvent) => void): void;
  /** As push, for an event nobody waits for: a delta joins the session's run of deltas posted
   *  with the same `reject`. */
  post(ev: SessionEvent, reject: (err: unknown, ev: SessionEvent) => void): void;
  /** A session's events numbered but not yet committed, in seq order (a copy). */
  unwritten(sessionId: string): SessionEvent[];
  /** Whether the session's event `seq` is numbered and not yet committed. */
  holds(sessionId: string, seq: number): boolean;
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

/** One event, or a run of deltas; `sealed` once a write carries it (a run then grows no more). */
interface Item {
  sessionId: string;
  ev: SessionEvent | undefined;
  run: RunBuilder | undefined;
  sealed: boolean;
  resolve(ev: SessionEvent): void;
  reject(err: unknown, ev: SessionEvent): void;
}

const ignore = () => undefined;
const lastSeqOf = (item: Item) => (item.run ? item.run.lastSeq : item.ev!.seq);
const rowsOf = (item: Item) => (item.run ? item.run.count : 1);
const eventsOf = (item: Item): SessionEvent[] => (item.run ? expandRun(item.run.snapshot()) : [item.ev!]);

const ATTEMPTS = 3;
/** A constraint the rows break (a deleted session's foreign key, a number written already), on
 *  SQLite or PostgreSQL: no retry helps, unlike a busy or dropped database. */
const REFUSED_ROWS =
  /FOREIGN KEY constraint failed|violates foreign key constraint|UNIQUE constraint failed|duplicate key value/i;
const FOREIGN_KEY = /FOREIGN KEY constraint failed|violates foreign key constraint/i;
/** Deleted sessions remembered (their late events dropped unwritten): the most recent ones. */
const FORGOTTEN_KEPT = 4096;

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
  opts: {
    batchSize: number;
    delayMs: number;
    log: (m: string, e?: unknown) => void;
    /** Which of these sessions no longer exist (asked when their rows' foreign key fails). */
    gone?(sessionIds: string[]): Promise<Set<string>>;
  },
): EventWriter {
  const queue: Item[] = [];
  /** Rows the queue holds (a run is a row per delta). */
  let queuedRows = 0;
  const pending = new Map<string, Item[]>();
  const onSettled = new Map<string, (() => void)[]>();
  /** written(): by session, the seq each waiter waits for (the last one pushed when it asked). */
  const onWritten = new Map<string, { lastSeq: number; wake: () => void }[]>();
  let writing: Promise<void> | undefined;
  const report = faultReport(opts.log);
  /** Deleted sessions let go of: their events are dropped, not written. */
  const forgotten = new Set<string>();

  /** The queue's first items, up to batchSize rows (at least one item). */
  function take(): Item[] {
    const batch: Item[] = [];
    let rows = 0;
    for (const item of queue) {
      const n = rowsOf(item);
      if (batch.length > 0 && rows + n > opts.batchSize) break;
      item.sealed = true;
      batch.push(item);
      rows += n;
    }
    return batch;
  }

  async function run() {
    while (queue.length > 0) {
      if (opts.delayMs > 0 && queuedRows < opts.batchSize) await new Promise((r) => setTimeout(r, opts.delayMs));
      const batch = take();
      const rows = batch.map((b): SessionEvent | DeltaRun => (b.run ? b.run.snapshot() : b.ev!));
      let error: unknown;
      // While the database refuses everything (disk full, read-only) one try a batch: retries
      // would only hold every later event back.
      for (let attempt = 1; attempt <= (report.failing() ? 1 : ATTEMPTS); attempt++) {
        try {
          await store.insert(rows);
          error = undefined;
          break;
        } catch (err) {
          error = err;
          // Rows the database refuses are refused again: straight to the split by session.
          if (REFUSED_ROWS.test(String((err as Error)?.message ?? err))) break;
          if (attempt < ATTEMPTS) await new Promise((r) => setTimeout(r, 50 * attempt));
        }
      }
      const failed = error === undefined ? new Map<Item, unknown>() : await bySession(batch, rows, error);
      const dropped = failed.size > 0 ? await deletedSessions(failed) : new Set<string>();
      for (const item of batch) if (dropped.has(item.sessionId)) failed.delete(item);
      // Only now may the events leave the readable tail.
      queue.splice(0, batch.length);
      for (const item of batch) {
        queuedRows -= rowsOf(item);
        const list = pending.get(item.sessionId)!;
        list.shift();
        const waiters = onWritten.get(item.sessionId);
        if (waiters) {
          const upTo = lastSeqOf(item);
          const still = waiters.filter((w) => (list.length > 0 && w.lastSeq > upTo) || (w.wake(), false));
          if (still.length > 0) onWritten.set(item.sessionId, still);
          else onWritten.delete(item.sessionId);
        }
        if (list.length === 0) {
          pending.delete(item.sessionId);
          for (const wake of onSettled.get(item.sessionId) ?? []) wake();
          onSettled.delete(item.sessionId);
        }
      }
      if (failed.size > 0) report.failed(failed.size, [...failed.values()][0]);
      else report.ok();
      for (const b of batch) {
        if (failed.has(b)) for (const ev of eventsOf(b)) b.reject(failed.get(b), ev);
        else if (b.ev) b.resolve(b.ev);
      }
      for (const sessionId of dropped) forget(sessionId);
    }
    writing = undefined;
  }

  /** The sessions among `failed`'s whose rows were refused because the session is gone. */
  async function deletedSessions(failed: Map<Item, unknown>): Promise<Set<string>> {
    const suspects = [...failed].filter(([, err]) => FOREIGN_KEY.test(String((err as Error)?.message ?? err)));
    if (suspects.length === 0 || !opts.gone) return new Set();
    try {
      return await opts.gone([...new Set(suspects.map(([item]) => item.sessionId))]);
    } catch {
      return new Set();
    }
  }

  /** A deleted session: its queued events are dropped (their publishers told they are done with,
   *  as written() is), and later ones are not queued. */
  function forget(sessionId: string) {
    forgotten.add(sessionId);
    if (forgotten.size > FORGOTTEN_KEPT) forgotten.delete(forgotten.values().next().value!);
    const items = pending.get(sessionId) ?? [];
    if (items.some((i) => i.sealed)) return; // in a write now: let go of once it is done (run above)
    pending.delete(sessionId);
    for (let i = queue.length - 1; i >= 0; i--) if (queue[i].sessionId === sessionId) queue.splice(i, 1);
    for (const item of items) {
      queuedRows -= rowsOf(item);
      if (item.ev) item.resolve(item.ev);
    }
    for (const w of onWritten.get(sessionId) ?? []) w.wake();
    onWritten.delete(sessionId);
    for (const wake of onSettled.get(sessionId) ?? []) wake();
    onSettled.delete(sessionId);
  }

  /** The refused batch again, each session's events in a write of their own: what fails now. */
  async function bySession(
    batch: Item[],
    rows: (SessionEvent | DeltaRun)[],
    error: unknown,
  ): Promise<Map<Item, unknown>> {
    const groups = new Map<string, number[]>();
    batch.forEach((b, i) => {
      const indexes = groups.get(b.sessionId);
      if (indexes) indexes.push(i);
      else groups.set(b.sessionId, [i]);
    });
    const failed = new Map<Item, unknown>();
    if (groups.size === 1) {
      for (const b of batch) failed.set(b, error);
      return failed;
    }
    for (const indexes of groups.values()) {
      try {
        await store.insert(indexes.map((i) => rows[i]));
      } catch (err) {
        for (const i of indexes) failed.set(batch[i], err);
      }
    }
    return failed;
  }

  function enqueue(item: Item) {
    if (forgotten.has(item.sessionId)) {
      if (item.ev) item.resolve(item.ev);
      return;
    }
    queue.push(item);
    queuedRows++;
    let list = pending.get(item.sessionId);
    if (!list) pending.set(item.sessionId, (list = []));
    list.push(item);
    writing ??= run();
  }

  return {
    push(ev, resolve, reject) {
      enqueue({ sessionId: ev.sessionId, ev, run: undefined, sealed: false, resolve, reject });
    },
    post(ev, reject) {
      if (forgotten.has(ev.sessionId)) return;
      if (runnable(ev)) {
        const last = pending.get(ev.sessionId)?.at(-1);
        const run = last?.run;
        if (run && !last.sealed && last.reject === reject && run.count < opts.batchSize && run.continuedBy(ev)) {
          run.add(ev);
          queuedRows++;
          return;
        }
        if (RunBuilder.fits(ev)) {
          enqueue({
            sessionId: ev.sessionId,
            ev: undefined,
            run: new RunBuilder(ev),
            sealed: false,
            resolve: ignore,
            reject,
          });
          return;
        }
      }
      enqueue({ sessionId: ev.sessionId, ev, run: undefined, sealed: false, resolve: ignore, reject });
    },
    unwritten: (sessionId) => (pending.get(sessionId) ?? []).flatMap(eventsOf),
    holds: (sessionId, seq) =>
      (pending.get(sessionId) ?? []).some((item) =>
        item.run ? item.run.firstSeq <= seq && seq <= item.run.lastSeq : item.ev!.seq === seq,
      ),
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
      const lastSeq = lastSeqOf(last);
      return new Promise<void>((wake) => {
        const list = onWritten.get(sessionId);
        if (list) list.push({ lastSeq, wake });
        else onWritten.set(sessionId, [{ lastSeq, wake }]);
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
