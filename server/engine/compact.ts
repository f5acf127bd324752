// Compaction: when a session's conversation nears the model's context window, or a request did
// not fit at all, the model is asked for a summary of it. The summary is stored as a message
// that stands for everything before it (history.ts reads from the latest one on), so the
// session goes on instead of failing every request from then on.
import type { TurnRows } from "../db";
import type { SessionEventBody, Usage } from "../protocol/events";
import { contextOverflow } from "./context";
import type { SummaryBlock } from "./history";
import { streamWithRetries, type RetryPolicy } from "./providers/retry";
import { retryNotice } from "./response";
import type { ConversationMessage, ModelRequestSpec, ProviderAdapter } from "./types";
import { addUsage, zeroUsage } from "./types";

export const SUMMARY_REQUEST =
  "The conversation so far is about to exceed your context window. Write a summary of it that lets you carry on " +
  "the work without the earlier messages. Include: what the user asked for and their goals, in their words where it " +
  "matters; decisions made and why; files read, created or changed, by path, and what changed in them; commands run " +
  "and results that matter; errors met and how they were resolved or not; what is left to do and the very next step. " +
  "Be specific and brief. Answer with the summary only, as text: do not call any tools.";

/** Characters of a long text kept when the conversation is cut down to fit (head, tail). */
const SHRUNK_RESULT = [1_500, 500] as const;

export interface CompactContext {
  rows: TurnRows;
  sessionId: string;
  turnId: string;
  emit(body: SessionEventBody): void;
  allocatePosition(): number;
}

export interface CompactRequest {
  system: string;
  tools: ModelRequestSpec["tools"];
  /** The conversation as the model was last to be sent it (history.ts). */
  messages: ConversationMessage[];
  /** Trailing messages left out of the summary and sent after it (the turn's own message). */
  keep: number;
  midTurn: boolean;
  /** The context the conversation filled, for the event. */
  tokens: number;
  /** The conversation did not fit: cut tool results down and drop old messages until it does. */
  shrink: boolean;
}

/** Why a conversation is summarized: it filled COMPACT_AT of the window, a request did not fit,
 *  or the person asked ("/compact"). */
export type CompactReason = "full" | "overflow" | "asked";

/** The message ("/compact" and what follows it) that asks for a summary now instead of a reply. */
export const COMPACT_COMMAND = /^\/compact(\s|$)/;

export function compactingNotice(why: CompactReason, tokens: number, window: number): SessionEventBody {
  const text =
    why === "overflow"
      ? "The request did not fit in the model's context window. Summarizing the conversation so the session can go on."
      : why === "asked"
        ? "Summarizing the conversation, as asked: later requests start from the summary."
        : `The conversation has filled ${Math.round((100 * tokens) / window)}% of the model's context window (${tokens.toLocaleString("en")} of ${window.toLocaleString("en")} tokens). Summarizing it so the session can go on.`;
  return { type: "notice", level: "info", code: "context_compacting", text };
}

export type CompactOutcome = { ok: true; usage: Usage } | { ok: false; usage: Usage; message: string };

/** Whether compacting `messages` would leave out anything (the summary would replace at least two). */
export const worthCompacting = (messages: ConversationMessage[], keep: number) => messages.length - keep >= 2;

export async function compactConversation(
  ctx: CompactContext,
  adapter: ProviderAdapter,
  req: CompactRequest,
  signal: AbortSignal,
  retry: RetryPolicy,
): Promise<CompactOutcome> {
  let history = req.messages.slice(0, req.messages.length - req.keep);
  if (req.shrink) history = history.map(shrink);
  const usage = zeroUsage();
  for (let cut = 0; ; cut++) {
    const got = await summarize(
      ctx,
      adapter,
      { system: req.system, tools: req.tools, messages: withRequest(history) },
      signal,
      retry,
    );
    addUsage(usage, got.usage);
    if (got.text) {
      const summary: SummaryBlock = { type: "summary", text: got.text, keep: req.keep, midTurn: req.midTurn };
      await ctx.rows.addMessage({
        sessionId: ctx.sessionId,
        turnId: ctx.turnId,
        position: ctx.allocatePosition(),
        role: "user",
        content: [summary],
      });
      ctx.emit({
        type: "context.compacted",
        turnId: ctx.turnId,
        summary: got.text,
        messages: req.messages.length - req.keep,
        tokens: req.tokens,
      });
      return { ok: true, usage };
    }
    const shorter = got.overflow && cut < 3 ? dropOldest(history) : undefined;
    if (!shorter)
      return { ok: false, usage, message: got.error ?? "The model answered the summary request with no text." };
    history = shorter;
  }
}

/** One summary request (with the usual retries), recorded as model requests of the turn. */
async function summarize(
  ctx: CompactContext,
  adapter: ProviderAdapter,
  spec: ModelRequestSpec,
  signal: AbortSignal,
  retry: RetryPolicy,
) {
  let attempt = 1;
  let request = await ctx.rows.openRequest({
    turnId: ctx.turnId,
    provider: adapter.kind,
    model: adapter.model,
    attempt,
  });
  let usage = zeroUsage();
  let text = "";
  let error: string | undefined;
  let stop: string | null = null;
  for await (const ev of streamWithRetries(adapter, spec, signal, retry)) {
    if (ev.type === "text") text += ev.text;
    else if (ev.type === "usage") usage = ev.usage;
    else if (ev.type === "finish") stop = ev.raw ?? ev.reason;
    else if (ev.type === "error") error = ev.message;
    else if (ev.type === "retry") {
      ctx.emit(retryNotice(ev, attempt, retry));
      await ctx.rows.closeRequest(request, { stopReason: null, error: ev.error.message, usage });
      usage = zeroUsage();
      text = "";
      request = await ctx.rows.openRequest({
        turnId: ctx.turnId,
        provider: adapter.kind,
        model: adapter.model,
        attempt: ++attempt,
      });
    }
  }
  await ctx.rows.closeRequest(request, { stopReason: stop, error: error ?? null, usage });
  if (signal.aborted) error ??= "Cancelled.";
  return {
    text: error ? "" : text.trim(),
    usage,
    error,
    overflow: error !== undefined && contextOverflow(error) !== undefined,
  };
}

/** The conversation with the summary request as its last user message. */
function withRequest(history: ConversationMessage[]): ConversationMessage[] {
  const last = history.at(-1);
  const ask = { type: "text" as const, text: SUMMARY_REQUEST };
  if (last?.role === "user") return [...history.slice(0, -1), { role: "user", content: [...last.content, ask] }];
  return [...history, { role: "user", content: [ask] }];
}

/** A message with its long tool results and long strings inside call arguments cut down, and
 *  its images named instead of sent (each costs the model as much as a page of text or more). */
function shrink(m: ConversationMessage): ConversationMessage {
  return {
    role: m.role,
    content: m.content.map((b) =>
      b.type === "tool_result"
        ? { ...b, content: cut(b.content) }
        : b.type === "tool_call"
          ? { ...b, arguments: shrinkArguments(b.arguments) }
          : b.type === "image"
            ? {
                type: "text" as const,
                text: `[An image the user attached (${b.mediaType}), left out of this summary request.]`,
              }
            : b,
    ),
  };
}

function cut(text: string): string {
  const [head, tail] = SHRUNK_RESULT;
  if (text.length <= head + tail + 100) return text;
  return `${text.slice(0, head)}\n[… ${text.length - head - tail} characters left out …]\n${text.slice(-tail)}`;
}

/** The arguments' JSON with every long string in it cut (it stays JSON the provider takes). */
function shrinkArguments(args: string): string {
  if (args.length <= SHRUNK_RESULT[0] + SHRUNK_RESULT[1] + 100) return args;
  try {
    return JSON.stringify(JSON.parse(args), (_key, value: unknown) => (typeof value === "string" ? cut(value) : value));
  } catch {
    return args;
  }
}

/** The older half of the conversation dropped, starting again at a message of the user's (never
 *  at tool results, whose calls would then be missing); none when no such start is left. */
function dropOldest(history: ConversationMessage[]): ConversationMessage[] | undefined {
  for (let i = Math.max(1, Math.floor(history.length / 2)); i < history.length; i++) {
    if (history[i].role === "user") return history.slice(i);
  }
  return undefined;
}
