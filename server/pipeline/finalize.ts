// Turns a tool's output into the text the model sees: cut on UTF-8 boundaries (shell past
// 30,000 bytes, anything else past 100 KB) with the full bytes spilled to the database, then
// network results wrapped in <external_content>. A failed spill is logged and its reference
// withheld. A command's output arrives already stored (stream.ts), each call its own range, so
// polls of a running command keep their middle too; other running polls are cut, not spilled.
import type { SpillStore } from "../services/spills";
import type { ToolResult } from "../tools/tool";
import { SHELL_LIMITS, TEXT_LIMITS, needsCut, planCut, renderCut, type CutLimits } from "./truncate";
import { renderStreamed } from "./stream";
import type { Logger } from "./types";
import { withUtf8 } from "./utf8";

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

// PostgreSQL text and jsonb cannot hold NUL; the model gets a visible stand-in, the spill the byte.
export function storableText(text: string): string {
  return text.includes("\0") ? text.replace(/\0/g, "\u2400") : text;
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
  try {
    ref = (await opts.spills.store({ sessionId: opts.sessionId, toolCallId: opts.toolCallId, bytes })).ref;
  } catch (e) {
    opts.log.error(
      `spill of ${bytes.length} bytes for tool call ${opts.toolCallId} failed; the reference is withheld`,
      e,
    );
  }
  return { content: storableText(renderCut(bytes, cut, ref)), truncated: true, spillRef: ref };
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
