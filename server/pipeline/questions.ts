// ask_user's questions and todo_write's list, as services a running call gets (run.ts).
// A question is an Approval row of its own kind (fingerprint QUESTION): the broker's waiting,
// polling across instances, waking, cancelling on a cancel and staying pending when the server
// stops are the approval card's (approve.ts), so a question survives a reload and a restart the
// same way.
// The answer is written on the row (status approved; scope "option:N" or "text"; message the
// answer's text) and read back by the waiting call. A question whose turn no longer runs (the
// server restarted while it waited: interrupted.ts keeps it open) is answered into a new turn:
// answerQuestion says so and the caller sends the answer as the person's next message.
import type { SessionEventBody } from "../protocol/events";
import type { QuestionAnswer, QuestionRequest } from "../protocol/todos-questions";
import type { QuestionOutcome, ToolServices } from "../tools/tool";
import { ApprovalError, type Core, type TurnState } from "./contract";
import { safeEmit } from "./records";

/** Marks a question's Approval row. A card's fingerprint is its session keys (`name` or
 *  `name:…`, a tool name being letters, digits, `_` and `-`), so none can start with `?`. */
export const QUESTION = "?question";

export const QUESTION_AT_RESTART =
  "The server restarted while this question waited for the person. The question stays open for them: their answer will come as their next message.";

export function agentServices(turn: TurnState, toolCallId: string): Pick<ToolServices, "questions" | "todos"> {
  const todos: ToolServices["todos"] = {
    publish: (list) => safeEmit(turn, { type: "todos.updated", callId: toolCallId, todos: list }),
  };
  // A subagent's calls (turn.parent) have nobody to ask.
  if (turn.parent || !turn.turnId) return { todos };
  return { todos, questions: { ask: (request, signal) => ask(turn, toolCallId, request, signal) } };
}

async function ask(
  turn: TurnState,
  toolCallId: string,
  request: QuestionRequest,
  signal: AbortSignal,
): Promise<QuestionOutcome> {
  const { core } = turn;
  const row = await core.broker.open({
    sessionId: turn.sessionId,
    toolCallId,
    fingerprint: QUESTION,
    exactFingerprint: `${QUESTION}:${toolCallId}`,
    request: request as never,
    reason: "question",
  });
  await safeEmit(turn, { type: "question.asked", questionId: row.id, callId: toolCallId, ...request });
  const answer = await core.broker.wait(row.id, signal);
  // A stopping server: the row stays pending for the next process (interrupted.ts).
  if (answer.interrupted) return { kind: "cancelled" };
  const stored = await core.deps.db.approval.findUnique({ where: { id: row.id } });
  const outcome = stored ? outcomeOf(stored, request) : { kind: "cancelled" as const };
  await safeEmit(turn, resolvedEvent(row.id, toolCallId, outcome, stored?.decidedById ?? undefined));
  return outcome;
}

function outcomeOf(
  row: { status: string; scope: string | null; message: string | null },
  request: QuestionRequest,
): QuestionOutcome {
  if (row.status !== "approved") return { kind: "cancelled" };
  const m = /^option:(\d+)$/.exec(row.scope ?? "");
  if (m) {
    const index = Number(m[1]);
    return { kind: "option", index, label: request.options[index]?.label ?? row.message ?? "" };
  }
  return { kind: "text", text: row.message ?? "" };
}

function resolvedEvent(questionId: string, callId: string, o: QuestionOutcome, by?: string) {
  return {
    type: "question.resolved" as const,
    questionId,
    callId,
    outcome: o.kind === "cancelled" ? ("cancelled" as const) : ("answered" as const),
    ...(o.kind === "option" ? { answer: o.label, option: o.index } : o.kind === "text" ? { answer: o.text } : {}),
    ...(by ? { by } : {}),
  };
}

export interface AnsweredQuestion {
  questionId: string;
  outcome: QuestionOutcome;
  /** No turn waits for it (the server restarted meanwhile): the answer goes as a new message,
   *  then `sent()` ends the card; `unsent()` puts the question back when that message could not. */
  orphan?: { message: string; sent(): Promise<void>; unsent(): Promise<void> };
}

/** Records the person's answer. Authorization is the caller's (the session's creator). */
export async function answerQuestion(
  core: Core,
  sessionId: string,
  callId: string,
  answer: QuestionAnswer,
  by: string,
  wakeElsewhere?: (approvalId: string) => Promise<void>,
): Promise<AnsweredQuestion> {
  const db = core.deps.db;
  const row = await db.approval.findUnique({
    where: { toolCallId: callId },
    include: { toolCall: { select: { turn: { select: { status: true } } } } },
  });
  if (!row || row.sessionId !== sessionId || row.fingerprint !== QUESTION)
    throw new ApprovalError("No such question.", "NOT_FOUND");
  const request = row.request as unknown as QuestionRequest;
  let scope: string;
  let text: string;
  if ("option" in answer) {
    const o = request.options[answer.option];
    if (!o)
      throw new ApprovalError(
        `This question has ${request.options.length} options (0 to ${request.options.length - 1}).`,
        "CONFLICT",
      );
    scope = `option:${answer.option}`;
    text = o.label;
  } else {
    if (!request.allowText)
      throw new ApprovalError("This question takes one of its options, not typed text.", "CONFLICT");
    scope = "text";
    text = answer.text.trim();
  }
  const orphan = row.toolCall.turn?.status !== "running";
  const r = await db.approval.updateMany({
    where: { id: row.id, status: "pending" },
    data: { status: "approved", scope, message: text, decidedById: by, decidedAt: new Date() },
  });
  if (r.count === 0)
    throw new ApprovalError(
      row.status === "approved"
        ? "This question was already answered."
        : "This question was cancelled: the turn that asked it was stopped.",
      "CONFLICT",
    );
  const outcome = outcomeOf({ status: "approved", scope, message: text }, request);
  if (!orphan) {
    // The waiting call reads the row and emits the card's end in its turn.
    core.broker.wake(row.id);
    await wakeElsewhere?.(row.id);
    return { questionId: row.id, outcome };
  }
  return {
    questionId: row.id,
    outcome,
    orphan: {
      message: `Answer to your question "${request.question}": ${text}`,
      sent: async () => void (await core.deps.emit?.(sessionId, resolvedEvent(row.id, callId, outcome, by))),
      unsent: () => reopenQuestion(core, row.id),
    },
  };
}

async function reopenQuestion(core: Core, questionId: string): Promise<void> {
  await core.deps.db.approval.updateMany({
    where: { id: questionId, status: "approved", fingerprint: QUESTION },
    data: { status: "pending", scope: null, message: null, decidedById: null, decidedAt: null },
  });
}

/** What the model is told of an answer (ask_user's result). */
export function answerText(o: QuestionOutcome): string {
  switch (o.kind) {
    case "option":
      return `The person chose option ${o.index + 1}: "${o.label}".`;
    case "text":
      return `The person answered in their own words:\n${o.text}`;
    case "cancelled":
      return "The person did not answer: the turn was stopped while the question waited. Do not assume an answer.";
  }
}

/** At recovery (interrupted.ts): the result of a question's call whose turn the server lost.
 *  Answered already: the answer. Pending: it stays open, undefined. */
export function recoveredQuestion(row: {
  id: string;
  toolCallId: string;
  status: string;
  scope: string | null;
  message: string | null;
  request: unknown;
  decidedById: string | null;
}): { result: string; event: SessionEventBody } | undefined {
  const o = outcomeOf(row, row.request as QuestionRequest);
  return o.kind === "cancelled"
    ? undefined
    : { result: answerText(o), event: resolvedEvent(row.id, row.toolCallId, o, row.decidedById ?? undefined) };
}
