// Answering ask_user's question card: the pipeline records the answer (and wakes the turn that
// waits for it, on whichever instance); a question whose turn the server lost at a restart is
// answered into a new turn, the answer sent as the person's next message.
import type { QuestionAnswer } from "../protocol/todos-questions";
import type { QuestionOutcome } from "../tools/tool";
import type { Actor, Services } from "./types";

export interface QuestionAnswered {
  outcome: QuestionOutcome;
  /** The turn the answer started (a question left open by a restart). */
  turnId?: string;
}

export async function answerQuestion(
  services: Pick<Services, "approvals" | "engine">,
  actor: Actor,
  input: { sessionId: string; callId: string; answer: QuestionAnswer },
): Promise<QuestionAnswered> {
  const answered = await services.approvals.answerQuestion(actor, input.sessionId, input.callId, input.answer);
  if (!answered.orphan) return { outcome: answered.outcome };
  try {
    const sent = await services.engine.sendMessage(
      input.sessionId,
      { userId: actor.userId, orgId: actor.orgId },
      answered.orphan.message,
    );
    await answered.orphan.sent();
    return { outcome: answered.outcome, turnId: sent.turnId };
  } catch (err) {
    // A turn is running (or the engine refused): the card stays open to be answered later.
    await answered.orphan.unsent();
    throw err;
  }
}
