// A long session opened in the IDE without replaying all of it: the latest turns first, earlier
// ones a window at a time when the person scrolls back. A window starts at a `turn.started`,
// so every event inside it belongs to a turn that is whole in it; the session-wide state an
// earlier event set (the runner's status, the workspace's file version) comes with it as
// `carry`, the latest such event before the window. Reads stored events only: a window's
// start is a stored event, and a session's events are stored in seq order, so nothing at or
// before it is still waiting to be written.
import type { Db, TurnRows } from "../db";
import type { SessionEvent, SessionEventBody } from "../protocol/events";
import { coalesce } from "./coalesce";
import { PAGE } from "./subscription";

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

/** Where stored events are read from: the driver on the query thread (TurnRows.events), or Prisma. */
export type EventPages = Pick<TurnRows, "events">;

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
  /** The window before `beforeSeq` and its events: what "show earlier" adds above the chat. */
  earlier(sessionId: string, beforeSeq: number, turns: number): Promise<TurnWindow & { events: SessionEvent[] }>;
}

export function createSessionHistory(db: Db, pages: EventPages = prismaEventPages(db)): SessionHistory {
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
      const afterSeq = start.seq - 1;
      const earlierTurns = await db.sessionEvent.count({
        where: { sessionId, type: "turn.started", seq: { lte: afterSeq } },
      });
      // Only session-wide events before the first turn: read them with it.
      if (earlierTurns === 0) return { afterSeq: 0, earlierTurns: 0, carry: [] };
      const carried = await Promise.all(
        CARRIED.map((type) =>
          db.sessionEvent.findFirst({ where: { sessionId, type, seq: { lte: afterSeq } }, orderBy: { seq: "desc" } }),
        ),
      );
      const carry = carried.flatMap((r) => (r ? [asEvent(sessionId, r)] : [])).sort((a, b) => a.seq - b.seq);
      return { afterSeq, earlierTurns, carry };
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
      const window = await history.window(sessionId, turns, beforeSeq);
      return { ...window, events: await history.range(sessionId, window.afterSeq, beforeSeq) };
    },
  };
  return history;
}
