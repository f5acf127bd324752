// One model response inside a turn: streams it (with retries), strips forged calls from the
// text, fans deltas out as events, persists the assistant message as it grows and one
// ModelRequest row per attempt with its usage, and returns the finished tool calls.
import type { TurnRows } from "../db";
import type { SessionEventBody, Usage } from "../protocol/events";
import type { ModelToolCall } from "../pipeline/contract";
import { ForgedCallFilter, forgedNotice } from "./forged";
import { streamWithRetries, type RetryPolicy } from "./providers/retry";
import type { ContentBlock, FinishReason, ModelRequestSpec, ProviderAdapter } from "./types";
import { zeroUsage } from "./types";

export interface ResponseContext {
  /** Only what a response writes (a subagent keeps its messages in memory: subagent.ts). */
  rows: Pick<TurnRows, "addMessage" | "setMessageContent" | "openRequest" | "closeRequest">;
  sessionId: string;
  turnId: string;
  /** Ordered, persisted fan-out; not awaited per delta (the hub keeps order). */
  emit(body: SessionEventBody): void;
  /** Resolves once everything emitted so far is stored or given up on (EventHub.written); with
   *  it, the stream is read no further ahead of the database than WRITE_AHEAD allows. */
  emitted?(): Promise<void>;
  allocatePosition(): number;
  onArgumentsProgress?(call: ModelToolCall & { complete: boolean }): void;
}

export interface ResponseOutcome {
  finish: FinishReason | "error";
  raw: string | null;
  calls: ModelToolCall[];
  usage: Usage;
  error?: { code: string; message: string };
  /** The stored assistant message holds tool calls (handed on or not). */
  storedCalls: boolean;
}

/**
 * The assistant message row, written when a block ends that the next request must carry (a
 * tool call, a signed reasoning block) and at the end. Streaming text is not written as it
 * grows: the event log holds every delta and start-up recovery completes the row from it
 * (recovery.ts).
 */
class MessageWriter {
  readonly blocks: ContentBlock[] = [];
  private id: string | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** The last write's error: a later write that succeeds supersedes it; done() reports it. */
  private failed: unknown;
  constructor(private readonly ctx: ResponseContext) {}

  save() {
    const content = structuredClone(this.blocks) as object[];
    // Never a rejected link in the chain: nobody awaits it until done(), so a failed write in
    // between would be an unhandled rejection, and that ends the server process.
    this.writing = this.writing.then(async () => {
      try {
        if (this.id) await this.ctx.rows.setMessageContent(this.id, content);
        else if (content.length > 0) {
          this.id = await this.ctx.rows.addMessage({
            sessionId: this.ctx.sessionId,
            turnId: this.ctx.turnId,
            position: this.ctx.allocatePosition(),
            role: "assistant",
            content,
          });
        }
        this.failed = undefined;
      } catch (err) {
        this.failed = err;
      }
    });
  }

  async done() {
    this.save();
    await this.writing;
    if (this.failed !== undefined) throw this.failed;
  }
}

/** What the person sees when a request is tried again: why, when, and which attempt comes next. */
export function retryNotice(
  ev: { error: { message: string }; delayMs: number },
  attempt: number,
  retry: RetryPolicy,
): SessionEventBody {
  return {
    type: "notice",
    level: "info",
    code: "provider_retry",
    text: `${ev.error.message} Retrying in ${(ev.delayMs / 1000).toFixed(1)} s (attempt ${attempt + 1} of ${retry.attempts}).`,
  };
}

/** Streamed text pieces joined into the message's text block at once. */
const RUN = 256;

/** Deltas emitted between two looks at the write-behind. At each look the stream is read on
 *  once the deltas up to the look before are stored: a provider that sends faster than the
 *  database stores (or a busy machine that starves the writer thread) leaves at most about
 *  twice this many deltas of the response in memory, and the rest in its socket. Each unwritten
 *  delta is held until its write (a resuming client reads it there), so without this the
 *  backlog grew with the whole response. */
export const WRITE_AHEAD = 1024;

/** Resolves when `written` does or the response is aborted (a stalled write must not hold a cancel). */
function untilWritten(written: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    written.then(done, done);
  });
}

export async function runResponse(
  ctx: ResponseContext,
  adapter: ProviderAdapter,
  spec: ModelRequestSpec,
  signal: AbortSignal,
  retry: RetryPolicy,
): Promise<ResponseOutcome> {
  const writer = new MessageWriter(ctx);
  const filter = new ForgedCallFilter();
  const calls: { id: string; name: string; args: string; ended: boolean }[] = [];
  let usage = zeroUsage();
  // Characters of output this attempt streamed: what a cancelled response is billed by (below).
  let streamedChars = 0;
  let attempt = 1;
  const open = () =>
    ctx.rows.openRequest({ turnId: ctx.turnId, provider: adapter.kind, model: adapter.model, attempt });
  let request = await open();
  let outcome: Omit<ResponseOutcome, "calls" | "usage" | "storedCalls"> = {
    finish: "error",
    raw: null,
    error: { code: "stream_incomplete", message: "The provider stream ended without a result." },
  };
  let reasoning: Extract<ContentBlock, { type: "reasoning" }> | undefined;

  // Streamed text is gathered a run of pieces at a time and joined into the text block flat:
  // `+=` per token would keep a rope of two objects per token for the whole response, several
  // times the text's own bytes. Any other block that starts first settles the run.
  let run: string[] = [];
  const joinRun = () => {
    if (run.length === 0) return;
    const text = run.length === 1 ? run[0] : run.join("");
    run = [];
    const last = writer.blocks.at(-1);
    if (last?.type === "text") last.text += text;
    else writer.blocks.push({ type: "text", text });
  };
  const appendText = (text: string) => {
    if (!text) return;
    run.push(text);
    if (run.length >= RUN) joinRun();
    ctx.emit({ type: "text.delta", turnId: ctx.turnId, text });
    deltas++;
  };
  let deltas = 0;
  let lastLook: Promise<void> | undefined;
  // Reasoning is gathered the same way, into the open reasoning block.
  let thought: string[] = [];
  const joinThought = () => {
    if (thought.length === 0) return;
    reasoning!.text += thought.length === 1 ? thought[0] : thought.join("");
    thought = [];
  };
  const settleText = () => {
    appendText(filter.flush().text);
    joinRun();
  };

  for await (const ev of streamWithRetries(adapter, spec, signal, retry)) {
    // Whatever else comes, the text before it is in the blocks first.
    if (ev.type !== "text") joinRun();
    if (ev.type !== "reasoning") joinThought();
    switch (ev.type) {
      case "text":
        streamedChars += ev.text.length;
        appendText(filter.push(ev.text).text);
        break;
      case "reasoning":
        streamedChars += ev.text.length;
        if (!reasoning) writer.blocks.push((reasoning = { type: "reasoning", text: "", provider: adapter.kind }));
        thought.push(ev.text);
        if (thought.length >= RUN) joinThought();
        ctx.emit({ type: "reasoning.delta", turnId: ctx.turnId, text: ev.text });
        deltas++;
        break;
      case "reasoning.block": {
        const block: Extract<ContentBlock, { type: "reasoning" }> = {
          type: "reasoning",
          text: ev.text,
          provider: adapter.kind,
        };
        if (ev.signature !== undefined) block.signature = ev.signature;
        if (ev.redactedData !== undefined) block.redactedData = ev.redactedData;
        if (reasoning) Object.assign(reasoning, block);
        else writer.blocks.push(block);
        reasoning = undefined;
        writer.save();
        break;
      }
      case "tool.start":
        settleText();
        reasoning = undefined;
        calls[ev.index] = { id: ev.id, name: ev.name, args: "", ended: false };
        // Known from its start, so no later call of the response can start early ahead of it.
        ctx.onArgumentsProgress?.({ providerCallId: ev.id, name: ev.name, rawArguments: "", complete: false });
        break;
      case "tool.delta": {
        const c = calls[ev.index];
        c.args += ev.argumentsDelta;
        streamedChars += ev.argumentsDelta.length;
        ctx.onArgumentsProgress?.({ providerCallId: c.id, name: c.name, rawArguments: c.args, complete: false });
        break;
      }
      case "tool.end": {
        const c = calls[ev.index];
        c.ended = true;
        writer.blocks.push({ type: "tool_call", id: c.id, name: c.name, arguments: c.args });
        writer.save();
        ctx.onArgumentsProgress?.({ providerCallId: c.id, name: c.name, rawArguments: c.args, complete: true });
        break;
      }
      case "usage":
        usage = ev.usage;
        break;
      case "retry":
        await ctx.rows.closeRequest(request, { stopReason: null, error: ev.error.message, usage });
        ctx.emit(retryNotice(ev, attempt, retry));
        usage = zeroUsage();
        streamedChars = 0;
        attempt++;
        request = await open();
        break;
      case "finish":
        outcome = { finish: ev.reason, raw: ev.raw };
        break;
      case "error":
        outcome = { finish: "error", raw: null, error: { code: ev.code, message: ev.message } };
        break;
    }
    if (deltas >= WRITE_AHEAD && ctx.emitted) {
      deltas = 0;
      const before = lastLook;
      lastLook = ctx.emitted();
      if (before) await untilWritten(before, signal);
    }
  }
  settleText();
  joinThought();
  // Providers send the output count at the end of a stream (Anthropic's start says 1), which a
  // cancelled one never reaches: what did stream is counted instead, at about 4 characters a token.
  if (outcome.finish === "cancelled" && streamedChars > 0) {
    usage = { ...usage, outputTokens: Math.max(usage.outputTokens, Math.ceil(streamedChars / 4)) };
  }
  // Calls cut off before their end (max_tokens, cancel) are still handed on when the response
  // finished at the limit, so the pipeline can refuse them in strict mode and the model resends.
  for (const c of calls) {
    if (c && !c.ended && outcome.finish === "max_tokens")
      writer.blocks.push({ type: "tool_call", id: c.id, name: c.name, arguments: c.args });
  }
  if (filter.strippedTotal > 0) ctx.emit(forgedNotice(filter.strippedTotal));
  await writer.done();
  await ctx.rows.closeRequest(request, {
    stopReason: outcome.raw ?? outcome.finish,
    error: outcome.error?.message ?? null,
    usage,
  });
  const finished = writer.blocks.flatMap((b) =>
    b.type === "tool_call" ? [{ providerCallId: b.id, name: b.name, rawArguments: b.arguments }] : [],
  );
  return {
    ...outcome,
    calls: outcome.finish === "cancelled" || outcome.finish === "error" ? [] : finished,
    usage,
    storedCalls: finished.length > 0,
  };
}
