// The fake provider's script: what each successive model request is answered with. A script
// file (JSON) is checked against this schema, so a typo names the bad field instead of
// producing a confusing stream.
import { z } from "zod";
import { FakeModelList } from "./models";

export const ScriptBlock = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  /** Anthropic: a thinking block with signature; OpenAI: reasoning deltas. */
  z.object({ type: z.literal("thinking"), text: z.string(), signature: z.string().optional() }),
  z.object({ type: z.literal("redacted_thinking"), data: z.string() }),
  /** `arguments` is sent exactly as given: it may be damaged or cut off on purpose. */
  z.object({ type: z.literal("tool_call"), id: z.string().optional(), name: z.string(), arguments: z.string() }),
]);
export type ScriptBlock = z.infer<typeof ScriptBlock>;

const Usage = z.object({
  input: z.number().int().nonnegative().default(10),
  output: z.number().int().nonnegative().default(5),
  cacheRead: z.number().int().nonnegative().default(0),
  cacheWrite: z.number().int().nonnegative().default(0),
});

export const ScriptResponse = z.object({
  kind: z.literal("response").default("response"),
  blocks: z.array(ScriptBlock).default([]),
  /** Default: tool_use when there are tool calls, else end_turn. `max_tokens` is `length` on OpenAI. */
  stop: z.enum(["end_turn", "tool_use", "max_tokens"]).optional(),
  usage: Usage.optional(),
  /** Characters per text/argument delta (default 8). */
  deltaChars: z.number().int().positive().default(8),
  /** Split the SSE bytes into chunks of these sizes (cycled), ignoring event and UTF-8 boundaries. */
  chunkBytes: z.array(z.number().int().positive()).optional(),
  /** Pause between writes, for slow streams. */
  delayMs: z.number().nonnegative().default(0),
  /** Write this many bytes of the stream, then stall until the client goes away. */
  hangAfterBytes: z.number().int().nonnegative().optional(),
  /** Write this many bytes, then wait until the test calls `resume()` (or the client goes away). */
  pauseAfterBytes: z.number().int().nonnegative().optional(),
  /** Fail mid-stream after the blocks with the provider's in-stream error form. */
  midStreamError: z.object({ type: z.string(), message: z.string() }).optional(),
  /** OpenAI-compatible server quirks to imitate. */
  quirks: z
    .object({
      /** Ollama: each tool call arrives whole in one chunk. */
      wholeToolCalls: z.boolean().optional(),
      /** Ollama: every tool call at index 0. */
      sameIndex: z.boolean().optional(),
      /** Ollama: finish_reason "stop" even with tool calls. */
      finishStop: z.boolean().optional(),
      /** "reasoning_content" (DeepSeek, vLLM; default) or "reasoning" (OpenRouter). */
      reasoningField: z.enum(["reasoning_content", "reasoning"]).optional(),
      /** OpenRouter: SSE comment keep-alives. */
      comments: z.boolean().optional(),
      /** DeepSeek usage fields instead of prompt_tokens_details. */
      deepseekUsage: z.boolean().optional(),
      /** No tool call ids (some local servers). */
      noIds: z.boolean().optional(),
    })
    .optional(),
});
export type ScriptResponse = z.infer<typeof ScriptResponse>;

export const ScriptHttpError = z.object({
  kind: z.literal("http_error"),
  status: z.number().int().min(400).max(599),
  /** Sent as the retry-after header (seconds or an HTTP date). */
  retryAfter: z.string().optional(),
  type: z.string().optional(),
  message: z.string().default("scripted failure"),
});
export type ScriptHttpError = z.infer<typeof ScriptHttpError>;

export const ScriptStep = z.union([ScriptHttpError, ScriptResponse]);
export type ScriptStep = z.infer<typeof ScriptStep>;
export type ScriptStepInput = z.input<typeof ScriptStep>;

export const Script = z.object({
  steps: z.array(ScriptStep),
  /** Start again from the first step when the script runs out (manual use with `npm start`).
   *  Each time through is a pass: see `forPass` for what a step can say about it. */
  loop: z.boolean().default(false),
  /** What `GET /v1/models` lists: [{ id, name?, images? }], or { status, message? } to fail (models.ts). */
  models: FakeModelList.optional(),
});
export type Script = z.infer<typeof Script>;

export const parseStep = (step: ScriptStepInput): ScriptStep => ScriptStep.parse(step);

const PASS = /\{\{pass(?:\+(\d+))?\}\}/g;

/**
 * The step as it is played on pass `pass` (1 the first time through the script, 2 once a looping
 * script has started again, …): `{{pass}}` in a block's text or a call's arguments becomes the
 * pass, `{{pass+N}}` the pass plus N. A looping script whose calls create files or listen on
 * ports then names new ones each time through, instead of failing on what its last pass made.
 */
export function forPass(step: ScriptStep, pass: number): ScriptStep {
  if (step.kind !== "response") return step;
  const fill = (text: string) => text.replace(PASS, (_m, plus?: string) => String(pass + Number(plus ?? 0)));
  return {
    ...step,
    blocks: step.blocks.map((b) =>
      b.type === "text" || b.type === "thinking"
        ? { ...b, text: fill(b.text) }
        : b.type === "tool_call"
          ? { ...b, arguments: fill(b.arguments) }
          : b,
    ),
  };
}
