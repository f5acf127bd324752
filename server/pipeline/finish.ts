// The finish stage: what a run came to becomes the call's settlement — its row, its
// tool.finished event and the text the model sees (the loop guard's bookkeeping follows in slot
// order, dispatch.ts). A tool's output is cut on UTF-8 boundaries (shell past 30,000 bytes,
// anything else past 100 KB) with the full bytes spilled to the database, then network results
// are wrapped in <external_content>. A failed spill is logged and its reference withheld; one
// refused by a bound (services/spills.ts: the session's stored outputs, a low disk) is cut the
// same and its marker says why the full output was not kept. A command's output arrives already
// stored (stream.ts), each call its own range, so polls of a running command keep their middle
// too; other running polls are cut, not spilled.
import { SpillRefused, type SpillStore } from "../services/spills";
import type { ToolResult } from "../tools/tool";
import type { CallRecord, Logger, Settlement } from "./contract";
import { personCopy } from "./person";
import { safeEmit } from "./records";
import { storableText } from "../db/storable";
import type { RunOutcome } from "./run";
import { renderStreamed } from "./stream";
import { SHELL_LIMITS, TEXT_LIMITS, needsCut, planCut, renderCut, type CutLimits } from "./truncate";
import { withUtf8 } from "./utf8";

export const CANCELLED_BEFORE = "Cancelled by the person before it ran.";
export const CANCELLED_DURING =
  "Cancelled by the person while it was running; it may have partly run. Check its effects before retrying.";

/** Settles the call with what its run (or its validation before a card) came to. */
export async function finish(call: CallRecord, outcome: RunOutcome): Promise<void> {
  const { turn } = call;
  switch (outcome.kind) {
    case "cancelled":
      return settle(call, { status: "cancelled", content: CANCELLED_DURING, isError: true, outcome: "neutral" });
    case "invalid":
      return settle(call, { status: "failed", content: outcome.message, isError: true, outcome: "failure" });
    case "fatal":
      turn.halt ??= `${call.name}: ${outcome.message}`;
      return settle(call, { status: "failed", content: outcome.message, isError: true, outcome: "failure" });
    case "result": {
      const r = outcome.result;
      call.running = isRunningPoll(r);
      const fin = await cutAndSpill(r, {
        sessionId: turn.sessionId,
        toolCallId: call.toolCallId,
        spills: turn.core.deps.spills,
        log: turn.core.log,
        limits: turn.core.limits,
      });
      const network = r.network ?? call.tool?.capabilities.includes("Network") ?? false;
      const source =
        typeof r.meta?.url === "string" ? r.meta.url : typeof r.meta?.origin === "string" ? r.meta.origin : undefined;
      const isError = r.isError === true;
      return settle(call, {
        status: isError ? "failed" : "succeeded",
        // Errors too: a network tool's error output carries the remote's text (a status page, an MCP isError result).
        content: network ? wrapExternal(fin.content, source) : fin.content,
        isError,
        outcome: isError ? "failure" : "success",
        truncated: fin.truncated,
        spillRef: fin.spillRef,
        diff: r.diff,
        // A command's or a page's own output is shown as it is, even when it failed.
        written: !network && r.kind !== "shell",
      });
    }
  }
}

/** Records how the call ended (row + tool.finished) and keeps its model-facing result. */
export async function settle(call: CallRecord, s: Settlement): Promise<void> {
  const { turn } = call;
  const { status, content, isError, truncated = false, spillRef, diff, written = true } = s;
  call.result = { content, isError, outcome: s.outcome };
  const ended = Date.now();
  const durationMs = call.startedAt ? ended - call.startedAt : 0;
  await turn.core.recorder.update(call.toolCallId, {
    status,
    endedAt: new Date(ended),
    result: content,
    isError,
    truncated,
    spillId: spillRef ?? null,
  });
  await safeEmit(turn, {
    type: "tool.finished",
    callId: call.toolCallId,
    status,
    ...personCopy(content, isError, written),
    isError,
    truncated,
    ...(spillRef ? { spillRef } : {}),
    durationMs,
    ...(diff !== undefined ? { diff: storableText(diff) } : {}),
  });
}

export interface Finalized {
  content: string;
  truncated: boolean;
  spillRef?: string;
}

export interface FinalizeOptions {
  sessionId: string;
  toolCallId: string;
  spills: SpillStore;
  log: Logger;
  limits?: { shell: CutLimits; text: CutLimits };
}

export function isRunningPoll(result: Pick<ToolResult, "meta">): boolean {
  return result.meta?.running === true || result.meta?.state === "running";
}

export async function cutAndSpill(result: ToolResult, opts: FinalizeOptions): Promise<Finalized> {
  const limits = result.kind === "shell" ? (opts.limits?.shell ?? SHELL_LIMITS) : (opts.limits?.text ?? TEXT_LIMITS);
  if (result.stream) {
    // Already stored while it streamed (stream.ts): only the rendering is left.
    const r = renderStreamed(result.stream, opts.limits?.shell ?? SHELL_LIMITS);
    return {
      content: storableText(result.output ? `${result.output}\n${r.text}` : r.text),
      truncated: r.truncated,
      ...(result.stream.ref ? { spillRef: result.stream.ref } : {}),
    };
  }
  const raw = result.meta?.bytes;
  if (raw instanceof Uint8Array) {
    if (!needsCut(raw.length, limits))
      return {
        content: storableText(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("utf8")),
        truncated: false,
      };
    return cutBytes(raw, result, limits, opts);
  }
  // A UTF-16 unit takes 1 to 3 bytes, so only lengths between threshold/3 and threshold need the
  // exact byte count; longer text is cut without a separate measuring pass.
  const text = result.output;
  const short =
    text.length * 3 <= limits.threshold ||
    (text.length <= limits.threshold && !needsCut(Buffer.byteLength(text, "utf8"), limits));
  if (short) return { content: storableText(text), truncated: false };
  // The scratch bytes are only hashed, inserted and decoded (copied out) before cutBytes settles.
  return withUtf8(text, (bytes) => cutBytes(bytes, result, limits, opts));
}

async function cutBytes(
  bytes: Uint8Array,
  result: ToolResult,
  limits: CutLimits,
  opts: FinalizeOptions,
): Promise<Finalized> {
  const cut = planCut(bytes, limits);
  if (isRunningPoll(result)) {
    const note = "The command is still running; its complete output is kept when it finishes.";
    return { content: storableText(renderCut(bytes, cut, undefined, note)), truncated: true };
  }
  let ref: string | undefined;
  let note: string | undefined;
  try {
    ref = (await opts.spills.store({ sessionId: opts.sessionId, toolCallId: opts.toolCallId, bytes })).ref;
  } catch (e) {
    if (e instanceof SpillRefused) {
      note = e.message;
      opts.log.warn(
        `spill of ${bytes.length} bytes for tool call ${opts.toolCallId} not kept (${e.reason === "disk" ? "low disk" : "session bound reached"})`,
      );
    } else
      opts.log.error(
        `spill of ${bytes.length} bytes for tool call ${opts.toolCallId} failed; the reference is withheld`,
        e,
      );
  }
  return { content: storableText(renderCut(bytes, cut, ref, note)), truncated: true, spillRef: ref };
}

function escapeAttr(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/** Wraps network content so the model can tell it from instructions; closing tags inside are defused. */
export function wrapExternal(content: string, source?: string): string {
  const body = content.replace(/<(\/?)external_content/gi, "<$1external_content_");
  const attr = source ? ` source="${escapeAttr(source)}"` : "";
  return `<external_content${attr}>\n${body}\n</external_content>`;
}
