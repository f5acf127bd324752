// One subscriber of a session's events (hub/events.ts): the stored events after its seq, then
// the not-yet-written tail, then live events, with no gap and no duplicate. Written as an
// iterator by hand, not as an async generator: it hands over every streamed token, and a
// generator's suspend and resume cost several promises and result objects per value where
// this costs one resolved promise. A live event that finds the consumer waiting settles its
// pending next() at once, with no wake-up round through the loop. The consumer calls next()
// after the previous one settled, as `for await` and tRPC's subscription loop do.
import type { SessionEvent } from "../protocol/events";
import { coalesce } from "./coalesce";

export interface SubscriptionSource {
  /** Registers the live listener; returns what undoes it. */
  listen(onEvent: (ev: SessionEvent) => void, onResync: () => void, onClose: () => void): () => void;
  /** The session's events numbered but not yet committed (a copy, seq order). */
  unwritten(): SessionEvent[];
  /** Up to `PAGE` stored events with seq > afterSeq, in order. */
  readPage(afterSeq: number): Promise<SessionEvent[]>;
  /** Live events held for a consumer that is not reading before it is sent back to the database. */
  bufferLimit: number;
}

export const PAGE = 500;

export interface SubscribeOptions {
  /** Stored runs of deltas as one event each (coalesce.ts). */
  folded?: boolean;
  /** False while the consumer cannot take more stored events: a replay waits for it (a client
   *  that reads slowly is not sent a session faster than it takes it, held in the server's memory). */
  ready?: () => boolean;
}
const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

// Replays share the main thread with every session's live tokens, so no number of them may
// hold it: stored events are handed out for at most REPLAY_SLICE_MS per turn of the event loop,
// across all subscribers (the rest wait for the next turn, in order), and only REPLAYS pages are
// read or being handed out at once (the query thread stays free for everything else,
// /api/health too, and a flood of replays holds two pages in memory, not one each: its garbage
// collections stay short). A subscriber whose socket is backlogged gives its place up. Live
// events are never held back.
export const REPLAY_SLICE_MS = 4;
export const REPLAYS = 2;
let sliceStart = -1;
let sliceWaiters: Array<() => void> = [];
const endSlice = () => {
  sliceStart = -1;
  const waiters = sliceWaiters;
  sliceWaiters = [];
  for (const w of waiters) w();
};
/** Undefined while this turn's replay slice lasts, else the turn to wait for. */
function replaySlice(): Promise<void> | undefined {
  const now = performance.now();
  if (sliceStart < 0) {
    sliceStart = now;
    setImmediate(endSlice);
  }
  if (now - sliceStart < REPLAY_SLICE_MS) return undefined;
  return new Promise<void>((resolve) => sliceWaiters.push(resolve));
}
const backlogged = () => new Promise<void>((resolve) => setTimeout(resolve, 10));
let replays = 0;
const replayWaiters: Array<() => void> = [];
/** A place among the REPLAYS; `first`: a subscriber's first page goes before every later one (a
 *  new subscriber, up to date after it, is not kept waiting behind long replays). */
function replayPlace(first: boolean): Promise<() => void> {
  return new Promise((resolve) => {
    const grant = () => {
      replays++;
      let held = true;
      resolve(() => {
        if (!held) return;
        held = false;
        replays--;
        replayWaiters.shift()?.();
      });
    };
    if (replays < REPLAYS) grant();
    else if (first) replayWaiters.unshift(grant);
    else replayWaiters.push(grant);
  });
}

export class Subscription implements AsyncIterableIterator<SessionEvent> {
  /** Events to hand out before anything else: a database page, then the unwritten tail, or a
   *  batch of live events. */
  private queue: SessionEvent[] = [];
  private at = 0;
  private live: SessionEvent[] = [];
  /** Still reading the database; the unwritten tail snapshot follows the last page. */
  private tail: SessionEvent[] | undefined;
  private pageWasFull = false;
  /** The queue holds stored events (paced), not live ones. */
  private replaying = false;
  private readBefore = false;
  /** Held while a stored page is read or handed out (REPLAYS). */
  private place: (() => void) | undefined;
  /** Live events may have been missed (the buffer overflowed, or a resync): read the database again. */
  private behind = true;
  private closed = false;
  /** The pending next() while nothing is left to hand out (queue, tail and live all empty). */
  private waiting:
    | ((r: IteratorResult<SessionEvent, undefined> | Promise<IteratorResult<SessionEvent, undefined>>) => void)
    | undefined;
  private unlisten: (() => void) | undefined;

  constructor(
    private readonly source: SubscriptionSource,
    private last: number,
    private readonly signal?: AbortSignal,
    /** Fold runs of stored deltas into one event each (coalesce.ts). */
    private readonly folded = false,
    /** False while the consumer cannot take more stored events (its socket's backlog is full). */
    private readonly ready?: () => boolean,
  ) {
    if (signal?.aborted) {
      this.closed = true;
      return;
    }
    this.unlisten = source.listen(
      (ev) => {
        const give = this.waiting;
        // Waiting means nothing else is queued and no catch-up is due: this event is next.
        if (give !== undefined && ev.seq > this.last) {
          this.waiting = undefined;
          this.last = ev.seq;
          give({ done: false, value: ev });
          return;
        }
        if (this.live.length >= source.bufferLimit) this.behind = true;
        else this.live.push(ev);
        this.rouse();
      },
      () => {
        this.behind = true;
        this.rouse();
      },
      this.close,
    );
    signal?.addEventListener("abort", this.close, { once: true });
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  next(): Promise<IteratorResult<SessionEvent, undefined>> {
    for (;;) {
      if (this.closed) return this.end();
      if (this.at < this.queue.length) {
        if (this.replaying) {
          if (this.ready?.() === false) {
            this.leave();
            return backlogged().then(() => this.next());
          }
          const wait = replaySlice();
          if (wait) return wait.then(() => this.next());
        }
        const ev = this.queue[this.at++];
        if (ev.seq <= this.last) continue;
        this.last = ev.seq;
        return Promise.resolve({ done: false, value: ev });
      }
      this.leave();
      if (this.tail) {
        if (this.pageWasFull) return this.readPage();
        this.fill(this.tail, true);
        this.tail = undefined;
        continue;
      }
      if (this.behind) {
        // Reset before catching up, not after: events that overflow while the database is read
        // must send us round again. Anything the listener saw before this point is in the tail
        // snapshot or the database (an event leaves the tail only after its write committed).
        this.behind = false;
        this.live = [];
        this.tail = this.source.unwritten();
        return this.readPage();
      }
      if (this.live.length > 0) {
        this.fill(this.live, false);
        this.live = [];
        continue;
      }
      return new Promise((resolve) => (this.waiting = resolve));
    }
  }

  return(): Promise<IteratorResult<SessionEvent, undefined>> {
    this.close();
    return this.end();
  }

  private readPage(): Promise<IteratorResult<SessionEvent, undefined>> {
    const first = !this.readBefore;
    this.readBefore = true;
    return replayPlace(first).then((release) => {
      this.place = release;
      if (this.closed) return this.end();
      return this.source.readPage(this.last).then(
        (rows) => {
          this.pageWasFull = rows.length === PAGE;
          this.fill(this.folded ? coalesce(rows) : rows, true);
          return this.next();
        },
        (err: unknown) => {
          this.close();
          this.end();
          throw err;
        },
      );
    });
  }

  /** Gives up this subscriber's place among the replays (its page is handed out, or it waits). */
  private leave() {
    this.place?.();
    this.place = undefined;
  }

  private fill(events: SessionEvent[], stored: boolean) {
    this.queue = events;
    this.at = 0;
    this.replaying = stored;
  }

  /** Lets a waiting next() look again, after the caller (the hub's fan-out) has returned. */
  private rouse() {
    const give = this.waiting;
    if (give === undefined) return;
    this.waiting = undefined;
    give(Promise.resolve().then(() => this.next()));
  }

  private readonly close = () => {
    this.closed = true;
    this.rouse();
  };

  private end(): Promise<IteratorReturnResult<undefined>> {
    this.leave();
    if (this.unlisten) {
      this.unlisten();
      this.unlisten = undefined;
      this.signal?.removeEventListener("abort", this.close);
    }
    this.queue = this.live = [];
    return Promise.resolve(DONE);
  }
}
