// Reading stored events backwards from a seq under a byte budget, for "show earlier"
// (history.ts): an agent can make a turn as large as it likes, so one answer must not hold the
// events of `turns` turns whatever their size. Pages are seq ranges read in order through
// `EventPages` (the query thread's driver in production), newest range first, each sized from the
// events already read so the last one passes the budget by little; reading stops there.
import type { SessionEvent } from "../protocol/events";
import type { TurnRows } from "../db";
import { PAGE } from "./subscription";

/** Where stored events are read from: the driver on the query thread (TurnRows.events), or Prisma. */
export type EventPages = Pick<TurnRows, "events">;

/** Serialized events one "show earlier" answer holds at most (but for one event bigger than it). */
export const EARLIER_BUDGET = 8 * 1024 * 1024;
/** Events of the first page backwards, and of the shortest: the sizes read so far choose the
 *  next page's length (growing by doubling), so the page that passes the budget passes it by little. */
const MIN_PAGE = 16;

export const eventBytes = (ev: SessionEvent): number => Buffer.byteLength(JSON.stringify(ev));

export interface BackRead {
  /** In seq order, unfolded: the events with afterSeq < seq ≤ beforeSeq. */
  events: SessionEvent[];
  afterSeq: number;
  /** No window start fitted the budget: `events` are the latest part of one longer turn. */
  partial: boolean;
}

/**
 * The events after the earliest of `starts` (window starts, latest first: a turn's start seq − 1,
 * or 0 for the session's first turn) whose events up to `beforeSeq` fit `budget`; when even the
 * latest does not fit, the latest events that do (at least one).
 */
export async function readBack(
  pages: EventPages,
  sessionId: string,
  beforeSeq: number,
  starts: readonly number[],
  budget: number,
): Promise<BackRead> {
  const floor = starts.at(-1) ?? 0;
  const held: SessionEvent[] = []; // latest first
  const sizes: number[] = [];
  let total = 0;
  let chosen = -1;
  let next = 0;
  // A start is settled once every event after it is counted.
  const settle = (counted: number) => {
    while (next < starts.length && starts[next] >= counted && total <= budget) chosen = starts[next++];
  };
  let width = MIN_PAGE;
  for (let hi = beforeSeq; hi > floor && total <= budget && next < starts.length;) {
    const lo = Math.max(floor, hi - width);
    const page = await pages.events(sessionId, lo, hi, hi - lo);
    for (let k = page.length - 1; k >= 0; k--) {
      settle(page[k].seq);
      const size = eventBytes(page[k]);
      held.push(page[k]);
      sizes.push(size);
      total += size;
    }
    hi = lo;
    settle(lo);
    // What is left of the budget at the sizes seen so far, but at most twice the last page:
    // small events now say little about the next ones (a turn's end is text, its middle output).
    const average = held.length ? total / held.length : 0;
    const fits = average ? Math.ceil((budget - total) / average) : PAGE;
    width = Math.min(PAGE, 2 * width, Math.max(MIN_PAGE, fits));
  }
  settle(floor);
  if (chosen >= 0) return { events: held.filter((ev) => ev.seq > chosen).reverse(), afterSeq: chosen, partial: false };
  let n = 1;
  for (let sum = sizes[0]; n < held.length && sum + sizes[n] <= budget; n++) sum += sizes[n];
  const events = held.slice(0, n).reverse();
  return { events, afterSeq: events[0].seq - 1, partial: true };
}

/** Stream text a viewer's window is redacted with on each side of a cut inside a turn: more
 *  than the redaction ever holds back (auth/redact-stream.ts HOLD_CAP), so a secret across the
 *  cut is seen whole from both parts. Bounded in bytes too (deltas are mostly envelope), read
 *  in pages growing from a few events as the budget's are. */
const LEAD_TEXT = 64 * 1024;
const LEAD_BYTES = 2 * 1024 * 1024;

const pieceChars = (ev: SessionEvent) =>
  ev.type === "tool.progress"
    ? ev.chunk.length
    : ev.type === "text.delta" || ev.type === "reasoning.delta"
      ? ev.text.length
      : 0;

/** The events of the turn `afterSeq` is inside, just before it: back to its `turn.started`
 *  (included) or the lead's bounds. */
export async function leadIn(pages: EventPages, sessionId: string, afterSeq: number): Promise<SessionEvent[]> {
  const out: SessionEvent[][] = [];
  let text = 0;
  let bytes = 0;
  for (let hi = afterSeq, width = MIN_PAGE; hi > 0 && text < LEAD_TEXT && bytes < LEAD_BYTES; width *= 2) {
    const lo = Math.max(0, hi - Math.min(PAGE, width));
    const page = await pages.events(sessionId, lo, hi, hi - lo);
    const start = page.findLastIndex((ev) => ev.type === "turn.started");
    out.unshift(start >= 0 ? page.slice(start) : page);
    if (start >= 0) break;
    for (const ev of page) {
      text += pieceChars(ev);
      bytes += eventBytes(ev);
    }
    hi = lo;
  }
  return out.flat();
}

/** The events just after `beforeSeq` while its turn goes on: up to the next `turn.started`
 *  (left out) or the lead's bounds. */
export async function leadOut(pages: EventPages, sessionId: string, beforeSeq: number): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  let text = 0;
  let bytes = 0;
  for (let lo = beforeSeq, width = MIN_PAGE; text < LEAD_TEXT && bytes < LEAD_BYTES; width *= 2) {
    const hi = lo + Math.min(PAGE, width);
    const page = await pages.events(sessionId, lo, hi, hi - lo);
    if (page.length === 0) break;
    for (const ev of page) {
      if (ev.type === "turn.started") return out;
      out.push(ev);
      text += pieceChars(ev);
      bytes += eventBytes(ev);
    }
    lo = hi;
  }
  return out;
}
