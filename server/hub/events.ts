// Per-session event fan-out with sequence numbers. Numbers come from Session.lastSeq, reserved
// atomically a block at a time (one UPDATE … increment per `lease` events, the next block asked
// for while half of this one is left, larger for a session whose events had to wait), so two
// processes never hand out the same number and a token costs no database round trip on its way
// to the browser. Each event is fanned out live at once and written to SessionEvent right behind
// (persist.ts, batched across sessions); until its write commits it is kept in memory, so a subscriber resuming from any
// seq reads the database, then the not-yet-written tail, then live events: no gap, no
// duplicate. A subscriber that falls behind is sent back to reading the database. While the
// database takes no writes (disk full, read-only) numbers are handed out past the stored
// lastSeq, and reserved with the next lease, so the live stream still says what happened.
import type { Db } from "../db";
import type { SessionEvent, SessionEventBody } from "../protocol/events";
import { providerOf, sqliteDate } from "../db/driver";
import { isDatabaseFault } from "../db/faults";
import { eventStoreFor, type EventStore } from "./event-store";
import { isoNow } from "./event-time";
import { eventWriter } from "./persist";
import { PAGE, Subscription, type SubscribeOptions } from "./subscription";
import { prismaEventPages, type EventPages } from "./history";
import { logFn } from "../log";

export interface EventHub {
  /** Assigns the seq and fans the event out now; resolves once it is durable. A session's
   *  events become durable in publish order: when one has resolved, every one published before
   *  it has been written too. */
  publish(sessionId: string, body: SessionEventBody): Promise<SessionEvent>;
  /** As publish, for events nobody waits for one by one (a turn's deltas): no promise per
   *  event. `refused` is told when its write fails. */
  post(sessionId: string, body: SessionEventBody, refused: (err: unknown, ev?: SessionEvent) => void): void;
  /** Resolves once every event of the session published or posted so far is written, or given
   *  up on (never rejects). */
  written(sessionId: string): Promise<void>;
  /** Events with seq > afterSeq, then live ones, until `signal` aborts or the hub is disposed.
   *  `folded`: stored runs of deltas come as one event each (hub/coalesce.ts). */
  subscribe(
    sessionId: string,
    afterSeq: number,
    signal?: AbortSignal,
    options?: SubscribeOptions,
  ): AsyncIterableIterator<SessionEvent>;
  /** The highest seq handed out for the session (0: none). */
  lastSeq(sessionId: string): Promise<number>;
  /** Whether a client may resume after `seq`: the event is stored, or numbered here and on its
   *  way to the database, or `seq` is where a history window starts. False for one a subscriber
   *  was shown live that a crash lost before its write (the write-behind's window: up to
   *  writeDelayMs plus one write); the resuming client then starts over from what is stored
   *  (api/routers/turns.ts). */
  holds(sessionId: string, seq: number): Promise<boolean>;
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
  /** Sequence numbers reserved per database round trip (default 256; a session whose events
   *  waited for a lease reserves up to 64 times as many). */
  lease?: number;
  /** Reserves `count` numbers for a session and returns the last (default: Session.lastSeq through Prisma). */
  reserve?: (sessionId: string, count: number) => Promise<number>;
  /** Most events one write carries (default 500). */
  batchSize?: number;
  /** How long a write waits for more events to carry (default 20 ms; 0: write at once). */
  writeDelayMs?: number;
  /** Where subscribers read stored events (default: Prisma); the server passes its query
   *  thread's driver reads (TurnRows.events), several times faster on a long session. */
  pages?: EventPages;
  /** Live events buffered per subscriber before it is sent back to the database. */
  subscriberBuffer?: number;
  log?: (message: string, err?: unknown) => void;
}

interface Waiting {
  body: SessionEventBody;
  resolve(ev: SessionEvent): void;
  reject(err: unknown, ev?: SessionEvent): void;
}

const ignore = () => undefined;

interface SessionState {
  next: number;
  max: number;
  leasing?: Promise<void>;
  /** Numbers handed out past Session.lastSeq while the database refused the lease (a full disk):
   *  the next lease reserves them too, so no number is handed out twice. */
  extra: number;
  /** Published before a lease was available; numbered and sent in order when it arrives. */
  waiting: Waiting[];
  /** Numbers the next lease reserves: doubled (up to MAX_LEASE_BLOCKS leases) whenever events
   *  had to wait for a lease asked for ahead of time, so a fast turn keeps ahead of the round trip. */
  size: number;
  /** A block leased ahead that does not follow the current one (another writer reserved in
   *  between): used once the current one runs out. */
  ahead?: { next: number; max: number };
  /** A lease asked for ahead of time was refused: the next is asked for when this block runs out. */
  refusedAhead?: boolean;
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

/** The highest seq a column holds (a 32-bit integer on PostgreSQL): "to the end" in a range. */
const MAX_SEQ = 2_147_483_647;

/** A session's lease grows up to this many times the configured one (16,384 numbers by default). */
const MAX_LEASE_BLOCKS = 64;

/** The numbers a session reserved and has not handed out: the last block only (an earlier,
 *  not contiguous one cannot be given back by lowering lastSeq). */
const unusedOf = (s: SessionState) => s.ahead ?? { next: s.next, max: s.max };

const GIVE_BACK = {
  sqlite: `UPDATE "Session" SET "lastSeq" = ? WHERE "id" = ? AND "lastSeq" = ?`,
  postgresql: `UPDATE "Session" SET "lastSeq" = $1 WHERE "id" = $2 AND "lastSeq" = $3`,
} as const;

/** A lease on SQLite as one plain statement: Prisma's update compiled the query in WebAssembly
 *  on the query thread each time (about 2 ms of CPU, a lease every turn or two). It sets what
 *  Prisma's did, updatedAt included. (On PostgreSQL the server's hub reserves its own way:
 *  shared.ts.) */
const LEASE_SQLITE = `UPDATE "Session" SET "lastSeq" = "lastSeq" + ?, "updatedAt" = ? WHERE "id" = ? RETURNING "lastSeq"`;

function sqliteReserve(db: Db) {
  return async (sessionId: string, count: number): Promise<number> => {
    const rows = (await db.$queryRawUnsafe(LEASE_SQLITE, count, sqliteDate(new Date()), sessionId)) as {
      lastSeq: number | bigint;
    }[];
    // Prisma's code for "no such row", which the lease's refusal reads.
    if (rows.length === 0) throw Object.assign(new Error(`No session ${sessionId}.`), { code: "P2025" });
    return Number(rows[0].lastSeq);
  };
}

export function createEventHub(db: Db, options: EventHubOptions = {}): LocalEventHub {
  const lease = options.lease ?? 256;
  const bufferLimit = options.subscriberBuffer ?? 10_000;
  const log = options.log ?? logFn("hub");
  const sessions = new Map<string, SessionState>();
  if (!options.store && !options.url)
    throw new Error("createEventHub needs the database url (or a store) to write events");
  const store = options.store ?? eventStoreFor(options.url!);
  const writer = eventWriter(store, {
    batchSize: options.batchSize ?? 500,
    delayMs: options.writeDelayMs ?? 20,
    log,
    // A session deleted under its last events (its delete, its project's, its org's): let go of, not a fault.
    gone: async (ids) => {
      const still = await db.session.findMany({ where: { id: { in: ids } }, select: { id: true } });
      const present = new Set(still.map((r) => r.id));
      return new Set(ids.filter((id) => !present.has(id)));
    },
  });
  const closers = new Set<() => void>();
  const resyncs = new Set<() => void>();
  const reserve =
    options.reserve ??
    (options.url && providerOf(options.url) === "sqlite" ? sqliteReserve(db) : undefined) ??
    ((sessionId: string, count: number) =>
      db.session
        .update({ where: { id: sessionId }, data: { lastSeq: { increment: count } }, select: { lastSeq: true } })
        .then((r) => r.lastSeq));
  let disposed = false;

  const stateOf = (sessionId: string): SessionState => {
    let s = sessions.get(sessionId);
    if (!s) {
      s = { next: 1, max: 0, extra: 0, waiting: [], size: lease, listeners: new Set() };
      sessions.set(sessionId, s);
    }
    return s;
  };

  function send(s: SessionState, sessionId: string, w: Waiting) {
    const ev = stamped(w.body, s.next++, sessionId, isoNow());
    if (s.next > s.max && s.ahead) {
      s.next = s.ahead.next;
      s.max = s.ahead.max;
      s.ahead = undefined;
    }
    // The next block is asked for when half of this one is left, not when it runs out: events
    // that wait for a lease are held whole (body, callbacks), and a turn streaming faster than
    // a lease's round trip used to keep almost all of its tokens waiting so.
    if (!s.leasing && !s.ahead && !s.refusedAhead && s.max - s.next < s.size >> 1) renew(s, sessionId);
    if (w.resolve === ignore) writer.post(ev, w.reject);
    else writer.push(ev, w.resolve, w.reject);
    for (const l of s.listeners) l(ev);
  }

  function renew(s: SessionState, sessionId: string) {
    if (s.leasing) return;
    const extra = s.extra;
    const size = s.size;
    const leased = (next: number, max: number) => {
      s.leasing = undefined;
      s.refusedAhead = false;
      // Events waited although numbers were left when this lease was asked for: ask for more next time.
      if (s.waiting.length > 0 && s.max > 0) s.size = Math.min(s.size * 2, lease * MAX_LEASE_BLOCKS);
      if (s.next > s.max) {
        s.next = next;
        s.max = max;
      } else if (next === s.max + 1) s.max = max;
      else s.ahead = { next, max };
      while (s.waiting.length > 0 && s.next <= s.max) send(s, sessionId, s.waiting.shift()!);
      if (s.waiting.length > 0) renew(s, sessionId);
    };
    const refused = (err: unknown) => {
      s.leasing = undefined;
      if (s.next <= s.max) s.refusedAhead = true;
      const missing = (err as { code?: string }).code === "P2025";
      const error = missing ? new Error(`No session ${sessionId}: its events cannot be recorded.`) : err;
      for (const w of s.waiting.splice(0)) w.reject(error);
    };
    s.leasing = reserve(sessionId, size + extra).then(
      (lastSeq) => {
        s.extra -= extra;
        leased(lastSeq - size + 1, lastSeq);
      },
      (err: unknown) => {
        if (!isDatabaseFault(err)) return refused(err);
        // The database takes no write but still answers reads: number on past its lastSeq, so
        // the events (the error that ends the turn among them) still reach the live subscribers.
        s.leasing = db.session.findUnique({ where: { id: sessionId }, select: { lastSeq: true } }).then(
          (row) => {
            if (!row) return refused(err);
            const base = Math.max(s.ahead?.max ?? s.max, row.lastSeq + s.extra);
            s.extra = base + size - row.lastSeq;
            leased(base + 1, base + size);
          },
          () => refused(err),
        );
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

  function post(sessionId: string, body: SessionEventBody, refused: (err: unknown, ev?: SessionEvent) => void): void {
    if (disposed) return refused(new Error("The event hub is shut down."));
    const s = stateOf(sessionId);
    const w = { body, resolve: ignore, reject: refused };
    if (s.waiting.length === 0 && s.next <= s.max) send(s, sessionId, w);
    else {
      s.waiting.push(w);
      renew(s, sessionId);
    }
  }

  const pages = options.pages ?? prismaEventPages(db);
  const readPage = (sessionId: string, afterSeq: number) => pages.events(sessionId, afterSeq, MAX_SEQ, PAGE);

  function subscribe(
    sessionId: string,
    afterSeq: number,
    signal?: AbortSignal,
    options: SubscribeOptions = {},
  ): AsyncIterableIterator<SessionEvent> {
    if (disposed) signal = AbortSignal.abort();
    return new Subscription(
      {
        listen(onEvent, onResync, onClose) {
          const s = stateOf(sessionId);
          s.listeners.add(onEvent);
          resyncs.add(onResync);
          closers.add(onClose);
          return () => {
            s.listeners.delete(onEvent);
            resyncs.delete(onResync);
            closers.delete(onClose);
          };
        },
        unwritten: () => writer.unwritten(sessionId),
        readPage: (after) => readPage(sessionId, after),
        bufferLimit,
      },
      afterSeq,
      signal,
      options.folded,
      options.ready,
    );
  }

  return {
    publish,
    post,
    async written(sessionId) {
      const s = sessions.get(sessionId);
      // Events waiting for a lease are numbered and handed to the writer as it arrives (a lease
      // asked for ahead of time, with nothing waiting, is not waited for).
      while (s?.leasing && s.waiting.length > 0) await s.leasing.catch(ignore);
      await writer.written(sessionId);
    },
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
      const unused = unusedOf(s);
      s.next = 1;
      s.max = 0;
      s.ahead = undefined;
      return unused;
    },
    async holds(sessionId, seq) {
      if (writer.holds(sessionId, seq)) return true;
      // A history window starts right before a turn.started (hub/history.ts): that seq may be
      // a gap in the numbers (a lease a crash left unused), never an event that was shown.
      const around = await pages.events(sessionId, seq - 1, seq + 1, 2);
      return around.some((e) => e.seq === seq || (e.seq === seq + 1 && e.type === "turn.started"));
    },
    async lastSeq(sessionId) {
      const s = sessions.get(sessionId);
      if (s && s.next > 1) return s.next - 1;
      const top = await db.sessionEvent.findFirst({
        where: { sessionId },
        orderBy: { seq: "desc" },
        select: { seq: true },
      });
      return top?.seq ?? 0;
    },
    async dispose() {
      disposed = true;
      await Promise.allSettled([...sessions.values()].map((s) => s.leasing));
      await writer.close();
      // Give back unused numbers when nobody reserved after us, so lastSeq stays the last event.
      // Bookkeeping, not activity: Session.updatedAt (the home page's "last active") is kept.
      await Promise.allSettled(
        [...sessions.entries()]
          .map(([id, s]) => [id, unusedOf(s)] as const)
          .filter(([, u]) => u.max > 0 && u.next <= u.max)
          .map(([id, u]) =>
            options.url
              ? db.$executeRawUnsafe(GIVE_BACK[providerOf(options.url)], u.next - 1, id, u.max)
              : db.session.updateMany({ where: { id, lastSeq: u.max }, data: { lastSeq: u.next - 1 } }),
          ),
      );
      for (const close of [...closers]) close();
    },
  };
}
