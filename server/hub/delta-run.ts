// A run of consecutive text or reasoning deltas of one turn, as the hub's write-behind holds it
// (persist.ts) until its rows are written: the run's text and each delta's length, not one
// event object per token. A streamed token then waits for its write as its text bytes plus a
// length, and the writer thread is posted one plain object per run instead of an event per
// token. Every delta still has its own seq and row: `expandRun` gives back exactly the events
// that were posted (same text, seq, time), for the writer's rows and for a subscriber that
// resumes from any seq inside the run.
import type { SessionEvent } from "../protocol/events";
import { msOfIso } from "./event-time";

export type RunnableDelta = Extract<SessionEvent, { type: "text.delta" | "reasoning.delta" }>;

/** What crosses to the writer thread: a structured-clone-friendly plain object. */
export interface DeltaRun {
  kind: "delta-run";
  type: RunnableDelta["type"];
  sessionId: string;
  turnId: string;
  firstSeq: number;
  text: string;
  /** Each delta's length in `text`, in seq order. */
  lengths: Uint16Array | Uint32Array;
  /** The deltas' times, run-length coded: ms after `firstMs` (`msAfter[i]`) for `msCounts[i]` deltas. */
  firstMs: number;
  msAfter: Uint32Array;
  msCounts: Uint32Array;
}

/** Whether a stamped event may start or join a run (its body has no field beyond the delta's own). */
export const runnable = (ev: SessionEvent): ev is RunnableDelta =>
  ev.type === "text.delta" || ev.type === "reasoning.delta";

// Node keeps a number in an array in 8 bytes and a string behind a 16-byte header, more than a
// token's text: lengths and times go in typed arrays, and pieces are joined every JOIN_EVERY.
const JOIN_EVERY = 64;

function grown<T extends Uint16Array | Uint32Array>(a: T, wide = false): T {
  const b = (wide || a instanceof Uint32Array ? new Uint32Array(a.length * 2) : new Uint16Array(a.length * 2)) as T;
  b.set(a);
  return b;
}

/** A run being filled on the main thread. */
export class RunBuilder {
  readonly type: RunnableDelta["type"];
  readonly sessionId: string;
  readonly turnId: string;
  readonly firstSeq: number;
  readonly firstMs: number;
  lastSeq: number;
  count = 0;
  private joined: string[] = [];
  private parts: string[] = [];
  private lengths: Uint16Array | Uint32Array = new Uint16Array(16);
  private msAfter = new Uint32Array(4);
  private msCounts = new Uint32Array(4);
  private times = 0;
  private lastAt: string;

  constructor(first: RunnableDelta) {
    this.type = first.type;
    this.sessionId = first.sessionId;
    this.turnId = first.turnId;
    this.firstSeq = first.seq;
    this.lastSeq = first.seq - 1;
    this.firstMs = msOfIso(first.at);
    this.lastAt = "";
    this.add(first);
  }

  /** Whether `ev` may start a run: its time is what the run gives back for it. */
  static fits(ev: RunnableDelta): boolean {
    return msOfIso(ev.at) >= 0;
  }

  /** Whether `ev` is the next delta of this run. */
  continuedBy(ev: SessionEvent): ev is RunnableDelta {
    return (
      ev.type === this.type &&
      ev.seq === this.lastSeq + 1 &&
      ev.sessionId === this.sessionId &&
      (ev as RunnableDelta).turnId === this.turnId &&
      (ev.at === this.lastAt || this.timeFits(ev.at))
    );
  }

  private timeFits(at: string): boolean {
    const ms = msOfIso(at);
    return ms >= this.firstMs && ms - this.firstMs < 2 ** 32;
  }

  add(ev: RunnableDelta): void {
    this.lastSeq = ev.seq;
    this.parts.push(ev.text);
    if (this.parts.length === JOIN_EVERY) this.joined.push(this.parts.splice(0).join(""));
    const wide = ev.text.length > 0xffff && this.lengths instanceof Uint16Array;
    if (wide || this.count === this.lengths.length) this.lengths = grown(this.lengths, wide);
    this.lengths[this.count++] = ev.text.length;
    if (ev.at === this.lastAt) {
      this.msCounts[this.times - 1]++;
      return;
    }
    this.lastAt = ev.at;
    if (this.times === this.msAfter.length) {
      this.msAfter = grown(this.msAfter);
      this.msCounts = grown(this.msCounts);
    }
    this.msAfter[this.times] = msOfIso(ev.at) - this.firstMs;
    this.msCounts[this.times++] = 1;
  }

  /** The run as it stands, to write or to read (a copy: the builder may still grow). */
  snapshot(): DeltaRun {
    const text = this.joined.join("") + this.parts.join("");
    // Flattened once, so the pieces are held once.
    this.joined = text.length > 0 ? [text] : [];
    this.parts = [];
    return {
      kind: "delta-run",
      type: this.type,
      sessionId: this.sessionId,
      turnId: this.turnId,
      firstSeq: this.firstSeq,
      text,
      lengths: this.lengths.slice(0, this.count),
      firstMs: this.firstMs,
      msAfter: this.msAfter.slice(0, this.times),
      msCounts: this.msCounts.slice(0, this.times),
    };
  }
}

/** Calls `delta` for each delta of a run in seq order, with its text and time (ISO, made once
 *  per millisecond of the run): the writer's rows need no event object per token. */
export function eachDelta(run: DeltaRun, delta: (seq: number, text: string, at: string) => void): void {
  let offset = 0;
  let time = -1;
  let left = 0;
  let at = "";
  for (let i = 0; i < run.lengths.length; i++) {
    if (left === 0) {
      left = run.msCounts[++time];
      at = new Date(run.firstMs + run.msAfter[time]).toISOString();
    }
    left--;
    delta(run.firstSeq + i, run.text.slice(offset, (offset += run.lengths[i])), at);
  }
}

/** The events a run holds, each as it was posted. */
export function expandRun(run: DeltaRun): SessionEvent[] {
  const out: SessionEvent[] = [];
  // Keys in the order the engine's bodies have them (the stored payload is their JSON).
  eachDelta(run, (seq, text, at) =>
    out.push({ type: run.type, turnId: run.turnId, text, seq, sessionId: run.sessionId, at } as SessionEvent),
  );
  return out;
}

/** Events and runs, as the write-behind hands them to a store: every event, runs expanded. */
export function expandRuns(items: ReadonlyArray<SessionEvent | DeltaRun>): SessionEvent[] {
  if (!items.some(isRun)) return items as SessionEvent[];
  return items.flatMap((item) => (isRun(item) ? expandRun(item) : [item]));
}

export const isRun = (item: SessionEvent | DeltaRun): item is DeltaRun => (item as DeltaRun).kind === "delta-run";
