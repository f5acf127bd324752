// The calls of a turn a server stopped in the middle of (kill -9, a crash), settled when that
// turn is recovered (engine/recovery.ts), before its turn.finished goes out:
// - a call that was running failed with what is known: it was running, its effects are
//   unknown, check before retrying; one still queued (never started) did not run; either
//   card ends with a tool.finished;
// - a card still waiting (or answered but not yet run) is cancelled: no model will continue the
//   turn to see its result, so the call must never run. Answering it later is refused with the
//   reason (approve.ts), and start-up's settleOrphan does not run it;
// - a call that had finished keeps its stored result, which is what the model is then given;
// - ask_user's question (pipeline/questions.ts) is no call with effects: answered, the answer is
//   its result; still open, it stays open and its answer becomes the person's next message.
// Returns, by the model's call id, the result the model gets for each call, and the events
// that end their cards.
import type { Db } from "../db";
import type { SessionEventBody } from "../protocol/events";
import { QUESTION, QUESTION_AT_RESTART, recoveredQuestion } from "./questions";

export const INTERRUPTED_RUNNING =
  "Interrupted: this call was running when the server stopped; its effects are unknown (it may have partly run): check before retrying.";

export const NOT_STARTED_AT_RESTART =
  "Not run: the server stopped before this call started; it did not run. Send it again if it is still needed.";

export const CANCELLED_AT_RESTART =
  "Not run: the server restarted while this call waited for approval, and no model would see its result, so its approval was cancelled. Ask for it again if it is still needed.";

export interface InterruptedCalls {
  /** providerCallId → the result the model is given for it. */
  results: Map<string, string>;
  events: SessionEventBody[];
}

export async function settleInterruptedCalls(db: Db, turnId: string): Promise<InterruptedCalls> {
  const rows = await db.toolCall.findMany({
    where: { turnId },
    include: { approval: true },
    orderBy: [{ createdAt: "asc" }, { slot: "asc" }],
  });
  const results = new Map<string, string>();
  const events: SessionEventBody[] = [];
  const now = new Date();
  const finished = (
    callId: string,
    status: "failed" | "cancelled",
    output: string,
    startedAt: Date | null,
  ): SessionEventBody => ({
    type: "tool.finished",
    callId,
    status,
    output,
    isError: true,
    truncated: false,
    durationMs: startedAt ? Math.max(0, now.getTime() - startedAt.getTime()) : 0,
  });
  for (const row of rows) {
    const q = row.approval?.fingerprint === QUESTION ? row.approval : undefined;
    if (q && row.status === "running" && (q.status === "pending" || q.status === "approved")) {
      // ask_user: an answer given is the result; a question still open stays open (its answer
      // will start the next turn, pipeline/questions.ts), and its card goes on showing it.
      const answered = recoveredQuestion(q);
      const result = answered?.result ?? QUESTION_AT_RESTART;
      await db.toolCall.updateMany({
        where: { id: row.id, status: "running" },
        data: { status: answered ? "succeeded" : "failed", isError: !answered, result, endedAt: now },
      });
      if (answered) events.push(answered.event);
      results.set(row.providerCallId, result);
      continue;
    }
    if (row.status === "running" || row.status === "queued") {
      // A queued call never reached its executor (startedAt is set when it starts running).
      const result = row.status === "queued" && !row.startedAt ? NOT_STARTED_AT_RESTART : INTERRUPTED_RUNNING;
      const r = await db.toolCall.updateMany({
        where: { id: row.id, status: row.status },
        data: { status: "failed", isError: true, result, endedAt: now },
      });
      if (r.count === 1) events.push(finished(row.id, "failed", result, row.startedAt));
      results.set(row.providerCallId, result);
    } else if (row.status === "awaiting_approval") {
      // Pending, or approved and not yet claimed to run (consumedAt): either way it never runs now.
      const a = row.approval;
      const cancelled = a
        ? await db.approval.updateMany({
            where: { id: a.id, status: { in: ["pending", "approved"] }, consumedAt: null },
            data: { status: "cancelled", message: CANCELLED_AT_RESTART, decidedAt: now },
          })
        : { count: 1 };
      if (cancelled.count === 0) {
        // Claimed to run just before the stop: as running.
        await db.toolCall.updateMany({
          where: { id: row.id },
          data: { status: "failed", isError: true, result: INTERRUPTED_RUNNING, endedAt: now },
        });
        events.push(finished(row.id, "failed", INTERRUPTED_RUNNING, row.startedAt));
        results.set(row.providerCallId, INTERRUPTED_RUNNING);
        continue;
      }
      await db.toolCall.updateMany({
        where: { id: row.id, status: "awaiting_approval" },
        data: { status: "cancelled", isError: true, result: CANCELLED_AT_RESTART, endedAt: now },
      });
      if (a)
        events.push({
          type: "approval.resolved",
          approvalId: a.id,
          callId: row.id,
          decision: "cancelled",
          message: CANCELLED_AT_RESTART,
        });
      events.push(finished(row.id, "cancelled", CANCELLED_AT_RESTART, null));
      results.set(row.providerCallId, CANCELLED_AT_RESTART);
    } else if (row.result !== null) {
      results.set(row.providerCallId, row.result);
    }
  }
  return { results, events };
}
