// A long session opened in the IDE without replaying all of it: the latest turns first, earlier
// ones a window at a time when the person scrolls back. A window starts at a `turn.started`,
// so every event inside it belongs to a turn that is whole in it; the session-wide state an
// earlier event set (the runner's status, the workspace's file version) comes with it as
// `carry`, the latest such event before the window. Reads stored events only: a window's
// start is a stored event, and a session's events are stored in seq order, so nothing at or
// before it is still waiting to be written.
import type { Db } from "../db";
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
const CARRIED = ["runner.status", "files.changed"] as const;

const asEvent = (sessionId: string, r: { seq: number; payload: unknown; createdAt: Date }): SessionEvent =>
  Object.assign({}, r.payload as SessionEventBody, { seq: r.seq, sessionId, at: r.createdAt.toISOString() }) as SessionEvent;

/** The window of the latest `turns` turns with seq ≤ `beforeSeq` (all of the session's when absent). */
export async function turnWindow(db: Db, sessionId: string, turns: number, beforeSeq?: number): Promise<TurnWindow> {
  const upTo = beforeSeq === undefined ? {} : { seq: { lte: beforeSeq } };
  const start = await db.sessionEvent.findFirst({ where: { sessionId, type: "turn.started", ...upTo }, orderBy: { seq: "desc" }, skip: turns - 1, select: { seq: true } });
  if (!start) return { afterSeq: 0, earlierTurns: 0, carry: [] };
  const afterSeq = start.seq - 1;
  const earlierTurns = await db.sessionEvent.count({ where: { sessionId, type: "turn.started", seq: { lte: afterSeq } } });
  // Only session-wide events before the first turn: read them with it.
  if (earlierTurns === 0) return { afterSeq: 0, earlierTurns: 0, carry: [] };
  const carried = await Promise.all(CARRIED.map((type) => db.sessionEvent.findFirst({ where: { sessionId, type, seq: { lte: afterSeq } }, orderBy: { seq: "desc" } })));
  const carry = carried.flatMap((r) => (r ? [asEvent(sessionId, r)] : [])).sort((a, b) => a.seq - b.seq);
  return { afterSeq, earlierTurns, carry };
}

/** Stored events with afterSeq < seq ≤ upToSeq, runs of deltas folded (coalesce.ts). */
export async function storedRange(db: Db, sessionId: string, afterSeq: number, upToSeq: number): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  for (let after = afterSeq; after < upToSeq; ) {
    const rows = await db.sessionEvent.findMany({ where: { sessionId, seq: { gt: after, lte: upToSeq } }, orderBy: { seq: "asc" }, take: PAGE });
    if (rows.length === 0) break;
    out.push(...rows.map((r) => asEvent(sessionId, r)));
    after = rows[rows.length - 1].seq;
  }
  return coalesce(out);
}

/** The window before `beforeSeq` and its events: what "show earlier" adds above the chat. */
export async function earlierTurns(db: Db, sessionId: string, beforeSeq: number, turns: number): Promise<TurnWindow & { events: SessionEvent[] }> {
  const window = await turnWindow(db, sessionId, turns, beforeSeq);
  return { ...window, events: await storedRange(db, sessionId, window.afterSeq, beforeSeq) };
}
