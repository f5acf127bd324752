// Per-session event fan-out. Every event is first written to SessionEvent with the next
// per-session sequence number (Session.lastSeq, bumped in the same transaction, so two writers
// never share a number), then handed to live subscribers in sequence order. A subscriber that
// starts after `afterSeq` reads what it missed from the database and continues live with no gap
// and no duplicate; a subscriber that falls behind is switched back to reading the database.
import type { Db } from "../db";
import type { SessionEvent, SessionEventBody } from "../protocol/events";

export interface EventHub {
  /** Persists the event, assigns its seq, fans it out; resolves once it is durable. */
  publish(sessionId: string, body: SessionEventBody): Promise<SessionEvent>;
  /** Events with seq > afterSeq, then live ones, until `signal` aborts or the hub is disposed. */
  subscribe(sessionId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<SessionEvent, void, undefined>;
  lastSeq(sessionId: string): Promise<number>;
  dispose(): Promise<void>;
}

export interface EventHubOptions {
  /** Most events one transaction writes (publishes queued meanwhile ride along). */
  batchSize?: number;
  /** Live events buffered per subscriber before it is sent back to the database. */
  subscriberBuffer?: number;
}

interface Pending {
  body: SessionEventBody;
  resolve(ev: SessionEvent): void;
  reject(err: unknown): void;
}

type Listener = (ev: SessionEvent) => void;

export function createEventHub(db: Db, options: EventHubOptions = {}): EventHub {
  const batchSize = options.batchSize ?? 256;
  const bufferLimit = options.subscriberBuffer ?? 10_000;
  const queues = new Map<string, Pending[]>();
  const flushing = new Map<string, Promise<void>>();
  const listeners = new Map<string, Set<Listener>>();
  const closers = new Set<() => void>();
  let disposed = false;

  async function flush(sessionId: string): Promise<void> {
    const queue = queues.get(sessionId)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, batchSize);
      let events: SessionEvent[];
      try {
        events = await db.$transaction(async (tx) => {
          const { lastSeq } = await tx.session.update({
            where: { id: sessionId },
            data: { lastSeq: { increment: batch.length } },
            select: { lastSeq: true },
          });
          const first = lastSeq - batch.length + 1;
          const at = new Date();
          const rows = batch.map((p, i) => ({ sessionId, seq: first + i, type: p.body.type, payload: p.body as object, createdAt: at }));
          await tx.sessionEvent.createMany({ data: rows });
          return batch.map((p, i) => ({ ...p.body, seq: first + i, sessionId, at: at.toISOString() }) as SessionEvent);
        });
      } catch (err) {
        const missing = (err as { code?: string }).code === "P2025";
        const error = missing ? new Error(`No session ${sessionId}: its events cannot be recorded.`) : err;
        for (const p of batch) p.reject(error);
        continue;
      }
      const subs = listeners.get(sessionId);
      events.forEach((ev, i) => {
        if (subs) for (const l of subs) l(ev);
        batch[i].resolve(ev);
      });
    }
    queues.delete(sessionId);
    flushing.delete(sessionId);
  }

  function publish(sessionId: string, body: SessionEventBody): Promise<SessionEvent> {
    if (disposed) return Promise.reject(new Error("The event hub is shut down."));
    return new Promise<SessionEvent>((resolve, reject) => {
      let queue = queues.get(sessionId);
      if (!queue) queues.set(sessionId, (queue = []));
      queue.push({ body, resolve, reject });
      if (!flushing.has(sessionId)) flushing.set(sessionId, flush(sessionId));
    });
  }

  async function* readAfter(sessionId: string, afterSeq: number): AsyncGenerator<SessionEvent> {
    for (let last = afterSeq; ; ) {
      const rows = await db.sessionEvent.findMany({ where: { sessionId, seq: { gt: last } }, orderBy: { seq: "asc" }, take: 500 });
      for (const r of rows) {
        last = r.seq;
        yield { ...(r.payload as SessionEventBody), seq: r.seq, sessionId, at: r.createdAt.toISOString() } as SessionEvent;
      }
      if (rows.length < 500) return;
    }
  }

  async function* subscribe(sessionId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<SessionEvent, void, undefined> {
    let buffer: SessionEvent[] = [];
    let overflow = false;
    let closed = disposed || !!signal?.aborted;
    let wake: (() => void) | undefined;
    const listener: Listener = (ev) => {
      if (buffer.length >= bufferLimit) overflow = true;
      else buffer.push(ev);
      wake?.();
    };
    const close = () => {
      closed = true;
      wake?.();
    };
    let subs = listeners.get(sessionId);
    if (!subs) listeners.set(sessionId, (subs = new Set()));
    // Listen before reading the database: an event committed meanwhile is then seen twice
    // (deduplicated by seq) rather than never.
    subs.add(listener);
    closers.add(close);
    signal?.addEventListener("abort", close, { once: true });
    let last = afterSeq;
    try {
      while (!closed) {
        for await (const ev of readAfter(sessionId, last)) {
          if (closed) return;
          last = ev.seq;
          yield ev;
        }
        overflow = false;
        while (!closed && !overflow) {
          if (buffer.length === 0) {
            await new Promise<void>((r) => (wake = r));
            wake = undefined;
            continue;
          }
          const batch = buffer;
          buffer = [];
          let gap = false;
          for (const ev of batch) {
            if (ev.seq <= last) continue;
            // Written by another server process: fetch the missing ones from the database.
            if (ev.seq > last + 1) {
              gap = true;
              break;
            }
            last = ev.seq;
            yield ev;
            if (closed) return;
          }
          if (gap) break;
        }
        buffer = [];
      }
    } finally {
      subs.delete(listener);
      if (subs.size === 0 && listeners.get(sessionId) === subs) listeners.delete(sessionId);
      closers.delete(close);
      signal?.removeEventListener("abort", close);
    }
  }

  return {
    publish,
    subscribe,
    async lastSeq(sessionId) {
      const s = await db.session.findUnique({ where: { id: sessionId }, select: { lastSeq: true } });
      return s?.lastSeq ?? 0;
    },
    async dispose() {
      disposed = true;
      await Promise.allSettled([...flushing.values()]);
      for (const close of [...closers]) close();
    },
  };
}
