// Per-session event fan-out with sequence numbers. Numbers come from Session.lastSeq, reserved
// atomically a block at a time (one UPDATE … increment per `lease` events), so two processes
// never hand out the same number and a token costs no database round trip on its way to the
// browser. Each event is fanned out live at once and written to SessionEvent right behind
// (persist.ts, batched across sessions); until its write commits it is kept in memory, so a subscriber resuming from any
// seq reads the database, then the not-yet-written tail, then live events: no gap, no
// duplicate. A subscriber that falls behind is sent back to reading the database.
import type { Db } from "../db";
import type { SessionEvent, SessionEventBody } from "../protocol/events";
import { eventStoreFor, type EventStore } from "./event-store";
import { eventWriter } from "./persist";

export interface EventHub {
  /** Assigns the seq and fans the event out now; resolves once it is durable. A session's
   *  events become durable in publish order: when one has resolved, every one published before
   *  it has been written too. */
  publish(sessionId: string, body: SessionEventBody): Promise<SessionEvent>;
  /** Events with seq > afterSeq, then live ones, until `signal` aborts or the hub is disposed. */
  subscribe(sessionId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<SessionEvent, void, undefined>;
  /** The highest seq handed out for the session (0: none). */
  lastSeq(sessionId: string): Promise<number>;
  /** Writes what is pending, returns unused numbers, ends subscriptions. */
  dispose(): Promise<void>;
}

/** What a broker plugs into (hub/shared.ts, several server instances on one database). */
export interface LocalEventHub extends EventHub {
  /** An event another instance published (already stored): to this instance's subscribers. */
  deliver(ev: SessionEvent): void;
  /** Live events may have been missed: every subscriber reads the database again from its last seq. */
  resync(): void;
  /** Stops numbering a session once its events are written; returns the unused block. Call with no publish in flight. */
  release(sessionId: string): Promise<{ next: number; max: number }>;
}

export interface EventHubOptions {
  /** The database's URL (the one `db` was opened with): events are written through its driver. */
  url?: string;
  /** Where events are written, instead of the store for `url` (tests hold writes with it). */
  store?: EventStore;
  /** Sequence numbers reserved per database round trip (default 256). */
  lease?: number;
  /** Reserves `count` numbers for a session and returns the last (default: Session.lastSeq through Prisma). */
  reserve?: (sessionId: string, count: number) => Promise<number>;
  /** Most events one write carries (default 500). */
  batchSize?: number;
  /** How long a write waits for more events to carry (default 20 ms; 0: write at once). */
  writeDelayMs?: number;
  /** Live events buffered per subscriber before it is sent back to the database. */
  subscriberBuffer?: number;
  log?: (message: string, err?: unknown) => void;
}

interface Waiting {
  body: SessionEventBody;
  resolve(ev: SessionEvent): void;
  reject(err: unknown): void;
}

interface SessionState {
  next: number;
  max: number;
  leasing?: Promise<void>;
  /** Published before a lease was available; numbered and sent in order when it arrives. */
  waiting: Waiting[];
  listeners: Set<(ev: SessionEvent) => void>;
}

/** A body with its number, session and time. Object.assign, not a spread: bodies come in a
 *  dozen shapes, and V8's spread of an object of changing shape costs microseconds a token. */
function stamped(body: SessionEventBody, seq: number, sessionId: string, at: string): SessionEvent {
  const ev = Object.assign({}, body) as SessionEvent;
  ev.seq = seq;
  ev.sessionId = sessionId;
  ev.at = at;
  return ev;
}

// The time of the last event, formatted once per millisecond (the format's precision): at
// thousands of tokens a second, toISOString was a third of the hub's cost per token.
let isoAt = 0;
let iso = "";
function isoNow(): string {
  const now = Date.now();
  if (now !== isoAt) {
    isoAt = now;
    iso = new Date(now).toISOString();
  }
  return iso;
}

export function createEventHub(db: Db, options: EventHubOptions = {}): LocalEventHub {
  const lease = options.lease ?? 256;
  const bufferLimit = options.subscriberBuffer ?? 10_000;
  const log = options.log ?? ((m: string, e?: unknown) => console.error(`[hub] ${m}`, e ?? ""));
  const sessions = new Map<string, SessionState>();
  if (!options.store && !options.url) throw new Error("createEventHub needs the database url (or a store) to write events");
  const store = options.store ?? eventStoreFor(options.url!);
  const writer = eventWriter(store, { batchSize: options.batchSize ?? 500, delayMs: options.writeDelayMs ?? 20, log });
  const closers = new Set<() => void>();
  const resyncs = new Set<() => void>();
  const reserve =
    options.reserve ??
    ((sessionId: string, count: number) =>
      db.session.update({ where: { id: sessionId }, data: { lastSeq: { increment: count } }, select: { lastSeq: true } }).then((r) => r.lastSeq));
  let disposed = false;

  const stateOf = (sessionId: string): SessionState => {
    let s = sessions.get(sessionId);
    if (!s) {
      s = { next: 1, max: 0, waiting: [], listeners: new Set() };
      sessions.set(sessionId, s);
    }
    return s;
  };

  function send(s: SessionState, sessionId: string, w: Waiting) {
    const ev = stamped(w.body, s.next++, sessionId, isoNow());
    writer.push(ev, w.resolve, w.reject);
    for (const l of s.listeners) l(ev);
  }

  function renew(s: SessionState, sessionId: string) {
    if (s.leasing) return;
    s.leasing = reserve(sessionId, lease)
      .then(
        (lastSeq) => {
          s.next = lastSeq - lease + 1;
          s.max = lastSeq;
          s.leasing = undefined;
          while (s.waiting.length > 0 && s.next <= s.max) send(s, sessionId, s.waiting.shift()!);
          if (s.waiting.length > 0) renew(s, sessionId);
        },
        (err: unknown) => {
          s.leasing = undefined;
          const missing = (err as { code?: string }).code === "P2025";
          const error = missing ? new Error(`No session ${sessionId}: its events cannot be recorded.`) : err;
          for (const w of s.waiting.splice(0)) w.reject(error);
        },
      );
  }

  function publish(sessionId: string, body: SessionEventBody): Promise<SessionEvent> {
    if (disposed) return Promise.reject(new Error("The event hub is shut down."));
    const s = stateOf(sessionId);
    return new Promise<SessionEvent>((resolve, reject) => {
      const w = { body, resolve, reject };
      if (s.waiting.length === 0 && s.next <= s.max) send(s, sessionId, w);
      else {
        s.waiting.push(w);
        renew(s, sessionId);
      }
    });
  }

  async function* readAfter(sessionId: string, afterSeq: number): AsyncGenerator<SessionEvent> {
    for (let last = afterSeq; ; ) {
      const rows = await db.sessionEvent.findMany({ where: { sessionId, seq: { gt: last } }, orderBy: { seq: "asc" }, take: 500 });
      for (const r of rows) {
        last = r.seq;
        yield stamped(r.payload as SessionEventBody, r.seq, sessionId, r.createdAt.toISOString());
      }
      if (rows.length < 500) return;
    }
  }

  async function* subscribe(sessionId: string, afterSeq: number, signal?: AbortSignal): AsyncGenerator<SessionEvent, void, undefined> {
    const s = stateOf(sessionId);
    let buffer: SessionEvent[] = [];
    let overflow = false;
    let closed = disposed || !!signal?.aborted;
    let wake: (() => void) | undefined;
    const listener = (ev: SessionEvent) => {
      if (buffer.length >= bufferLimit) overflow = true;
      else buffer.push(ev);
      wake?.();
    };
    const close = () => {
      closed = true;
      wake?.();
    };
    // Listen first, then copy the unwritten tail, then read the database: every event is in at
    // least one of the three (an event leaves the tail only after its write committed).
    const resync = () => {
      overflow = true;
      wake?.();
    };
    s.listeners.add(listener);
    closers.add(close);
    resyncs.add(resync);
    signal?.addEventListener("abort", close, { once: true });
    let last = afterSeq;
    try {
      while (!closed) {
        // Reset before catching up, not after: events that overflow the buffer while the
        // database is read must send us round again, or they are lost and the reader stalls.
        // Anything the listener saw before this point is in the tail snapshot or the database.
        overflow = false;
        buffer = [];
        const tail = writer.unwritten(sessionId);
        for await (const ev of readAfter(sessionId, last)) {
          if (closed) return;
          last = ev.seq;
          yield ev;
        }
        for (const ev of tail) {
          if (ev.seq <= last) continue;
          last = ev.seq;
          yield ev;
        }
        while (!closed && !overflow) {
          if (buffer.length === 0) {
            await new Promise<void>((r) => (wake = r));
            wake = undefined;
            continue;
          }
          const batch = buffer;
          buffer = [];
          for (const ev of batch) {
            if (ev.seq <= last) continue;
            last = ev.seq;
            yield ev;
            if (closed) return;
          }
        }
      }
    } finally {
      s.listeners.delete(listener);
      closers.delete(close);
      resyncs.delete(resync);
      signal?.removeEventListener("abort", close);
    }
  }

  return {
    publish,
    subscribe,
    deliver(ev) {
      const s = sessions.get(ev.sessionId);
      if (s) for (const l of s.listeners) l(ev);
    },
    resync: () => {
      for (const r of [...resyncs]) r();
    },
    async release(sessionId) {
      const s = sessions.get(sessionId);
      if (!s) return { next: 1, max: 0 };
      while (s.leasing) await s.leasing;
      await writer.settled(sessionId);
      const unused = { next: s.next, max: s.max };
      s.next = 1;
      s.max = 0;
      return unused;
    },
    async lastSeq(sessionId) {
      const s = sessions.get(sessionId);
      if (s && s.next > 1) return s.next - 1;
      const top = await db.sessionEvent.findFirst({ where: { sessionId }, orderBy: { seq: "desc" }, select: { seq: true } });
      return top?.seq ?? 0;
    },
    async dispose() {
      disposed = true;
      await Promise.allSettled([...sessions.values()].map((s) => s.leasing));
      await writer.close();
      // Give back unused numbers when nobody reserved after us, so lastSeq stays the last event.
      await Promise.allSettled(
        [...sessions.entries()]
          .filter(([, s]) => s.max > 0 && s.next <= s.max)
          .map(([id, s]) => db.session.updateMany({ where: { id, lastSeq: s.max }, data: { lastSeq: s.next - 1 } })),
      );
      for (const close of [...closers]) close();
    },
  };
}
