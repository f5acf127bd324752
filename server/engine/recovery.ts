// Start-up recovery: a turn still "running" in the database belongs to a server that stopped
// mid-turn. It is marked interrupted, never left running forever, and what had streamed is
// kept: the assistant text is completed from the persisted text.delta events (the message row
// is written at intervals, the event log on every delta), and calls left without a result get
// one saying why, so the session can continue. With several server instances on one database,
// only turns whose instance is gone (no fresh heartbeat, hub/cluster.ts) are recovered: a live
// instance is still running its own. Those are claimed first (hub/commands.ts), at start-up and
// whenever a live instance notices a peer gone, and recoverClaimedTurns recovers the claimed ones.
// The turn's calls are settled with what is known of them (pipeline/interrupted.ts): the model
// is told a running call may have partly run, a waiting card is cancelled, a finished call's
// result is kept; their cards end (tool.finished) before the turn's turn.finished.
import type { Db } from "../db";
import type { EventHub } from "../hub/events";
import { settleInterruptedCalls } from "../pipeline/interrupted";
import { closeOpenCalls } from "./history";
import type { ContentBlock } from "./types";

type Log = (m: string, e?: unknown) => void;

const why = "Not run: the server restarted during this turn before this call started.";

/** Every running turn: for a server alone on its database (SQLite); with peers, turns are claimed. */
export async function recoverInterruptedTurns(db: Db, hub: EventHub, log: Log): Promise<number> {
  const turns = await db.turn.findMany({
    where: { status: "running" },
    orderBy: { startedAt: "asc" },
    select: { id: true, sessionId: true },
  });
  return recover(db, hub, log, turns);
}

/** Recovers turns this instance claimed from gone instances (still running, under its id). */
export async function recoverClaimedTurns(db: Db, hub: EventHub, log: Log, turnIds: string[]): Promise<number> {
  if (turnIds.length === 0) return 0;
  const turns = await db.turn.findMany({
    where: { id: { in: turnIds }, status: "running" },
    orderBy: { startedAt: "asc" },
    select: { id: true, sessionId: true },
  });
  return recover(db, hub, log, turns);
}

async function recover(db: Db, hub: EventHub, log: Log, turns: { id: string; sessionId: string }[]): Promise<number> {
  for (const turn of turns) {
    try {
      await restoreStreamedText(db, turn.sessionId, turn.id);
      const calls = await settleInterruptedCalls(db, turn.id);
      // A streamed output the stopped server was still storing is never sealed, read or given
      // to the model, yet it would count against the session's bound until it expires (7 days).
      // Only the turn being recovered can have been writing one: a session runs one turn.
      await db.spill.deleteMany({ where: { sessionId: turn.sessionId, sha256: "" } });
      await closeOpenCalls(db, turn.sessionId, turn.id, (id) => calls.results.get(id) ?? why);
      const now = new Date();
      await db.modelRequest.updateMany({
        where: { turnId: turn.id, endedAt: null },
        data: { endedAt: now, error: "interrupted by a server restart" },
      });
      await db.turn.update({
        where: { id: turn.id },
        data: { status: "interrupted", stopReason: "server_restart", endedAt: now },
      });
      await db.session.update({ where: { id: turn.sessionId }, data: { status: "interrupted" } });
      for (const ev of calls.events) await hub.publish(turn.sessionId, ev);
      await hub.publish(turn.sessionId, {
        type: "notice",
        level: "warn",
        code: "turn_interrupted",
        text: "The server restarted during this turn. What had streamed is kept; send a message to continue.",
      });
      await hub.publish(turn.sessionId, {
        type: "turn.finished",
        turnId: turn.id,
        status: "interrupted",
        stopReason: "server_restart",
      });
    } catch (err) {
      log(`could not recover interrupted turn ${turn.id}`, err);
    }
  }
  return turns.length;
}

async function restoreStreamedText(db: Db, sessionId: string, turnId: string): Promise<void> {
  const events = await db.sessionEvent.findMany({
    where: { sessionId, type: "text.delta" },
    orderBy: { seq: "asc" },
    select: { payload: true },
  });
  const streamed = events
    .map((e) => e.payload as { turnId?: string; text?: string })
    .filter((p) => p.turnId === turnId)
    .map((p) => p.text ?? "")
    .join("");
  const messages = await db.message.findMany({ where: { sessionId, turnId }, orderBy: { position: "asc" } });
  const stored = messages
    .filter((m) => m.role === "assistant")
    .flatMap((m) => (m.content as unknown as ContentBlock[]).flatMap((b) => (b.type === "text" ? [b.text] : [])))
    .join("");
  if (streamed.length <= stored.length || !streamed.startsWith(stored)) return;
  const rest = streamed.slice(stored.length);
  const last = messages.at(-1);
  if (last?.role === "assistant") {
    const blocks = last.content as unknown as ContentBlock[];
    const tail = blocks.at(-1);
    const content: ContentBlock[] =
      tail?.type === "text"
        ? [...blocks.slice(0, -1), { type: "text", text: tail.text + rest }]
        : [...blocks, { type: "text", text: rest }];
    await db.message.update({ where: { id: last.id }, data: { content: content as object[] } });
  } else {
    const top = await db.message.findFirst({
      where: { sessionId },
      orderBy: { position: "desc" },
      select: { position: true },
    });
    await db.message.create({
      data: {
        sessionId,
        turnId,
        position: (top?.position ?? -1) + 1,
        role: "assistant",
        content: [{ type: "text", text: rest }],
      },
    });
  }
}
