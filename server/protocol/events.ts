// Events from the server to browsers, one union for the per-session subscription. Every event
// carries the session's sequence number so a client that reconnects asks for what it missed.
import { z } from "zod";
import { QuestionOption, Todo } from "./todos-questions";
import { ImageRef } from "./attachments";
import { SessionMode } from "./modes";

export const ToolStatus = z.enum([
  "queued",
  "awaiting_approval",
  "running",
  "succeeded",
  "failed",
  "rejected",
  "cancelled",
  "blocked",
]);
export type ToolStatus = z.infer<typeof ToolStatus>;

export const TurnStatus = z.enum(["running", "completed", "cancelled", "interrupted", "failed"]);
export type TurnStatus = z.infer<typeof TurnStatus>;

export const ApprovalDecision = z.enum(["approved_once", "approved_session", "rejected", "cancelled"]);
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

export const Usage = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative(),
  cacheWriteTokens: z.number().int().nonnegative(),
});
export type Usage = z.infer<typeof Usage>;

/** What an approval card shows: enough to decide without opening anything else. */
export const ApprovalRequest = z.object({
  tool: z.string(),
  summary: z.string(),
  command: z.string().optional(),
  diff: z.string().optional(),
  /** The whole change, stored as a spill (spills.read), when `diff` is clipped. */
  diffRef: z
    .string()
    .regex(/^sp_[0-9a-f]{32}$/)
    .optional(),
  url: z.string().optional(),
  reason: z.string(),
  /** What answering "for this session" would cover, e.g. `npm test *`. */
  covers: z.string().optional(),
  /** The same in plain sentences, one per thing allowed ("Allow `echo` with any arguments for this session"). */
  allows: z.array(z.string()).optional(),
  /** A command the shell classifier calls destructive, and what it could destroy. */
  destructive: z.object({ reason: z.string() }).optional(),
  /** Set when an org rule could match a command the shell analysis could not see through
   *  (`eval`, `$(…)` in command position, `sh -c "$x"`, a pipe into a shell): what and why. */
  policyUnchecked: z.string().max(2000).optional(),
  /** What the tool says the person should know before answering, e.g. that git_push's remote is
   *  not the one the workspace last pushed to. */
  note: z.string().max(2000).optional(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;

/** The share of the model's context window at which the server summarizes a conversation
 *  (engine/context.ts); the IDE's context meter marks it. */
export const COMPACT_AT = 0.8;

const body = z.discriminatedUnion("type", [
  z.object({ type: z.literal("turn.started"), turnId: z.string() }),
  /** `images`: what the person attached (attachments.read gives the bytes); absent when none. */
  z.object({
    type: z.literal("message.user"),
    messageId: z.string(),
    text: z.string(),
    images: z.array(ImageRef).optional(),
  }),
  z.object({ type: z.literal("text.delta"), turnId: z.string(), text: z.string() }),
  /** The session's mode changed (sessions.setMode, an accepted plan, or the org forbade it: `reason`). */
  z.object({
    type: z.literal("session.mode"),
    mode: SessionMode,
    previous: z.string().optional(),
    reason: z.string().optional(),
  }),
  z.object({ type: z.literal("reasoning.delta"), turnId: z.string(), text: z.string() }),
  z.object({
    type: z.literal("tool.started"),
    turnId: z.string(),
    callId: z.string(),
    name: z.string(),
    input: z.unknown(),
    summary: z.string(),
    /** The session's mode the call was judged in (absent: recorded before modes). */
    mode: SessionMode.optional(),
    /** A subagent's call: the task call it runs under (its card holds this one). */
    parentCallId: z.string().optional(),
  }),
  z.object({
    type: z.literal("tool.status"),
    callId: z.string(),
    status: ToolStatus,
    /** Why a call runs without asking the person now: an earlier session approval or a policy rule. */
    approvedBy: z.object({ kind: z.enum(["session", "policy"]), reason: z.string() }).optional(),
  }),
  z.object({ type: z.literal("tool.progress"), callId: z.string(), chunk: z.string() }),
  z.object({
    type: z.literal("tool.finished"),
    callId: z.string(),
    status: ToolStatus,
    output: z.string(),
    isError: z.boolean(),
    truncated: z.boolean(),
    spillRef: z.string().optional(),
    durationMs: z.number().nonnegative(),
    /** An edit's or write's unified diff of what it applied (real line numbers, bounded); for the card, never the model. */
    diff: z.string().optional(),
    /** A person-facing line for a failure whose text was written for the model (pipeline/person.ts). */
    note: z.string().optional(),
    /** What the model was told, when `output` (the person's copy) differs from it; behind a toggle on the card. */
    modelText: z.string().optional(),
  }),
  z.object({
    type: z.literal("approval.required"),
    approvalId: z.string(),
    callId: z.string(),
    request: ApprovalRequest,
  }),
  z.object({
    type: z.literal("approval.resolved"),
    approvalId: z.string(),
    callId: z.string(),
    decision: ApprovalDecision,
    by: z.string().optional(),
    message: z.string().optional(),
  }),
  z.object({
    type: z.literal("notice"),
    level: z.enum(["info", "warn"]),
    code: z.string(),
    text: z.string(),
  }),
  /** The turn's usage so far (each one replaces the last; the last is the turn's total), and
   *  how full the model's context window was at the latest request (prompt plus reply). */
  z.object({
    type: z.literal("usage"),
    turnId: z.string(),
    usage: Usage,
    context: z.object({ tokens: z.number().int().nonnegative(), window: z.number().int().positive() }).optional(),
  }),
  /** The conversation neared (or passed) the model's context window and was replaced by a
   *  summary: later requests start from it. `messages`: how many stored messages it stands for;
   *  `tokens`: the context they filled. */
  z.object({
    type: z.literal("context.compacted"),
    turnId: z.string(),
    summary: z.string(),
    messages: z.number().int().nonnegative(),
    tokens: z.number().int().nonnegative(),
  }),
  z.object({
    type: z.literal("turn.finished"),
    turnId: z.string(),
    status: TurnStatus,
    stopReason: z.string().optional(),
  }),
  /** The agent's task list (todo_write), whole each time: the latest replaces the ones before. */
  z.object({ type: z.literal("todos.updated"), callId: z.string(), todos: z.array(Todo) }),
  /** ask_user's question card; `questionId` is what questions.answer names. */
  z.object({
    type: z.literal("question.asked"),
    questionId: z.string(),
    callId: z.string(),
    question: z.string(),
    options: z.array(QuestionOption),
    allowText: z.boolean(),
  }),
  /** The card's end: an option chosen (`option`, its label in `answer`), typed text, or cancelled. */
  z.object({
    type: z.literal("question.resolved"),
    questionId: z.string(),
    callId: z.string(),
    outcome: z.enum(["answered", "cancelled"]),
    answer: z.string().optional(),
    option: z.number().int().nonnegative().optional(),
    by: z.string().optional(),
  }),
  /** Checkpoints (issue 27): the workspace recorded before a turn's first change, after the
   *  turn, or just before a restore (its undo); `filesChanged` against the checkpoint before it. */
  z.object({
    type: z.literal("checkpoint.created"),
    checkpointId: z.string(),
    turnId: z.string(),
    phase: z.enum(["before", "after", "restore-undo"]),
    filesChanged: z.number().int().nonnegative(),
  }),
  /** The conversation rewound to before the first of `turnIds`: those stay shown, marked rewound, and leave the model's context. */
  z.object({ type: z.literal("turn.rewound"), rewindId: z.string(), turnIds: z.array(z.string()) }),
  z.object({ type: z.literal("turn.unrewound"), rewindId: z.string(), turnIds: z.array(z.string()) }),
  /** Files put back as checkpoint `checkpointId` had them; restoring to `undoCheckpointId` undoes it. */
  z.object({
    type: z.literal("checkpoint.restored"),
    checkpointId: z.string(),
    undoCheckpointId: z.string(),
    paths: z.array(z.string()),
  }),
  /** The person's review of one hunk of the agent's changes (of a turn, or of the session when no turnId). */
  z.object({
    type: z.literal("hunk.reviewed"),
    turnId: z.string().optional(),
    path: z.string(),
    hunkId: z.string(),
    state: z.enum(["accepted", "reverted"]),
  }),
  z.object({ type: z.literal("error"), turnId: z.string().optional(), code: z.string(), message: z.string() }),
  z.object({ type: z.literal("files.changed"), paths: z.array(z.string()), version: z.number().int() }),
  z.object({
    type: z.literal("runner.status"),
    connected: z.boolean(),
    runnerId: z.string().optional(),
    sandboxed: z.boolean().optional(),
  }),
]);

export const SessionEventBody = body;
export type SessionEventBody = z.infer<typeof body>;

export const SessionEvent = z.intersection(
  z.object({ seq: z.number().int().nonnegative(), sessionId: z.string(), at: z.string() }),
  body,
);
export type SessionEvent = SessionEventBody & { seq: number; sessionId: string; at: string };
