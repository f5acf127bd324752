// A long session opened in the IDE without replaying all of it: the latest turns first, earlier
// ones a window at a time when the person scrolls back. A window starts at a `turn.started`,
// so every event inside it belongs to a turn that is whole in it; the session-wide state an
// earlier event set (the runner's status, the workspace's file version) comes with it as
// `carry`, the latest such event before the window. Reads stored events only: a window's
// start is a stored event, and a session's events are stored in seq order, so nothing at or
// before it is still waiting to be written. "Show earlier" holds at most a byte budget of
// events (history-read.ts): fewer turns than asked when they are big, and a turn bigger than
// the budget alone in parts, latest first, that the IDE joins (app/_lib/earlier-parts.ts).
import type { Db } from "../db";
import type { SessionEvent, SessionEventBody } from "../protocol/events";
import { coalesce } from "./coalesce";
import { PAGE } from "./subscription";
import { EARLIER_BUDGET, leadIn, leadOut, readBack, type EventPages } from "./history-read";

export { EARLIER_BUDGET, type EventPages } from "./history-read";

export interface TurnWindow {
  /** Events after this seq make up the window (0: the session from its start). */
  afterSeq: number;
  /** Turns that started at or before `afterSeq`. */
  earlierTurns: number;
  /** The latest of each session-wide event at or before `afterSeq` (runner status, file version). */
  carry: SessionEvent[];
}

/** Session-wide events: later ones replace earlier ones, whichever turn they came in. */
const CARRIED = ["runner.status", "files.changed", "todos.updated"] as const;

/** What "show earlier" answers. `partial`: one turn alone was over the budget, so `events` are
 *  its latest part, after `afterSeq` (not a turn's start); asking again before `afterSeq` gives
 *  the part before, until an answer that is not partial starts at its turn. */
export interface EarlierWindow extends TurnWindow {
  events: SessionEvent[];
  partial?: true;
}

export function prismaEventPages(db: Db): EventPages {
  return {
    events: (sessionId, afterSeq, upToSeq, limit) =>
      db.sessionEvent
        .findMany({ where: { sessionId, seq: { gt: afterSeq, lte: upToSeq } }, orderBy: { seq: "asc" }, take: limit })
        .then((rows) => rows.map((r) => asEvent(sessionId, r))),
  };
}

const asEvent = (sessionId: string, r: { seq: number; payload: unknown; createdAt: Date }): SessionEvent =>
  Object.assign({}, r.payload as SessionEventBody, {
    seq: r.seq,
    sessionId,
    at: r.createdAt.toISOString(),
  }) as SessionEvent;

export interface SessionHistory {
  /** The window of the latest `turns` turns with seq ≤ `beforeSeq` (all of the session's when absent). */
  window(sessionId: string, turns: number, beforeSeq?: number): Promise<TurnWindow>;
  /** Stored events with afterSeq < seq ≤ upToSeq, runs of deltas folded (coalesce.ts). */
  range(sessionId: string, afterSeq: number, upToSeq: number): Promise<SessionEvent[]>;
  /** What "show earlier" adds above the chat: the window of at most `turns` turns before
   *  `beforeSeq` whose events fit the budget, or a part of one turn over it (`partial`). */
  earlier(sessionId: string, beforeSeq: number, turns: number): Promise<EarlierWindow>;
  /** Events of the turns an earlier answer cuts, just either side of it, bounded (`before` when
   *  it is partial, `after` when `beforeSeq` is inside a turn): a viewer's answer is redacted
   *  with them, as one stream (earlier-redacted.ts). */
  around(
    sessionId: string,
    window: EarlierWindow,
    beforeSeq: number,
  ): Promise<{ before: SessionEvent[]; after: SessionEvent[] }>;
}

export interface HistoryOptions {
  /** Serialized events one `earlier` answer holds at most (EARLIER_BUDGET). */
  budget?: number;
}

export function createSessionHistory(
  db: Db,
  pages: EventPages = prismaEventPages(db),
  { budget = EARLIER_BUDGET }: HistoryOptions = {},
): SessionHistory {
  const turnsUpTo = (sessionId: string, seq: number) =>
    db.sessionEvent.count({ where: { sessionId, type: "turn.started", seq: { lte: seq } } });
  /** The window after `afterSeq` (a turn's start − 1): the turns before it, and the carry. */
  async function windowAt(sessionId: string, afterSeq: number): Promise<TurnWindow> {
    const earlierTurns = await turnsUpTo(sessionId, afterSeq);
    // Only session-wide events before the first turn: read them with it.
    if (earlierTurns === 0) return { afterSeq: 0, earlierTurns: 0, carry: [] };
    const carried = await Promise.all(
      CARRIED.map((type) =>
        db.sessionEvent.findFirst({ where: { sessionId, type, seq: { lte: afterSeq } }, orderBy: { seq: "desc" } }),
      ),
    );
    const carry = carried.flatMap((r) => (r ? [asEvent(sessionId, r)] : [])).sort((a, b) => a.seq - b.seq);
    return { afterSeq, earlierTurns, carry };
  }

  const history: SessionHistory = {
    async window(sessionId, turns, beforeSeq) {
      const upTo = beforeSeq === undefined ? {} : { seq: { lte: beforeSeq } };
      const start = await db.sessionEvent.findFirst({
        where: { sessionId, type: "turn.started", ...upTo },
        orderBy: { seq: "desc" },
        skip: turns - 1,
        select: { seq: true },
      });
      if (!start) return { afterSeq: 0, earlierTurns: 0, carry: [] };
      return windowAt(sessionId, start.seq - 1);
    },
    async range(sessionId, afterSeq, upToSeq) {
      const out: SessionEvent[] = [];
      for (let after = afterSeq; after < upToSeq;) {
        const page = await pages.events(sessionId, after, upToSeq, PAGE);
        if (page.length === 0) break;
        for (const ev of page) out.push(ev);
        after = page[page.length - 1].seq;
      }
      return coalesce(out);
    },
    async earlier(sessionId, beforeSeq, turns) {
      // One more start than asked says whether the earliest asked is the session's first turn,
      // whose window begins at the session's start.
      const found = await db.sessionEvent.findMany({
        where: { sessionId, type: "turn.started", seq: { lte: beforeSeq } },
        orderBy: { seq: "desc" },
        take: turns + 1,
        select: { seq: true },
      });
      const starts = found.slice(0, turns).map((r) => r.seq - 1);
      if (found.length <= turns) starts.splice(-1, 1, 0);
      const read = await readBack(pages, sessionId, beforeSeq, starts, budget);
      if (!read.partial) return { ...(await windowAt(sessionId, read.afterSeq)), events: coalesce(read.events) };
      // The client joins the parts and keeps only the last one's window: no carry to read.
      const earlierTurns = await turnsUpTo(sessionId, read.afterSeq);
      return { afterSeq: read.afterSeq, earlierTurns, carry: [], events: coalesce(read.events), partial: true };
    },
    async around(sessionId, window, beforeSeq) {
      return {
        before: window.partial ? await leadIn(pages, sessionId, window.afterSeq) : [],
        after: await leadOut(pages, sessionId, beforeSeq),
      };
    },
  };
  return history;
}
