// OpenAI-compatible chat completions adapter (OpenAI, DeepSeek, Ollama, vLLM, OpenRouter).
// Differences handled here: reasoning arrives as `reasoning_content` (DeepSeek, vLLM) or
// `reasoning` (OpenRouter, Ollama); Ollama sends whole tool calls in one chunk, sometimes all at
// index 0 and with finish_reason "stop"; some servers omit call ids; usage may come as
// DeepSeek's prompt_cache_hit_tokens or as prompt_tokens_details.cached_tokens.
import type OpenAI from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import { MISSING_IMAGE } from "../images";
import type {
  ConversationMessage,
  FinishReason,
  ModelRequestSpec,
  ProviderAdapter,
  ProviderConfig,
  StreamEvent,
} from "../types";
import type { Usage } from "../../protocol/events";
import { isAbort, toStreamError } from "./errors";
import { httpFetch } from "./http-fetch";
import { parseArguments } from "../../tools/repair/arguments";

const isOfficial = (baseURL?: string) => !baseURL || /^https:\/\/api\.openai\.com\b/.test(baseURL);

export function openaiRequest(spec: ModelRequestSpec, config: ProviderConfig): ChatCompletionCreateParamsStreaming {
  const messages: ChatCompletionMessageParam[] = [{ role: "system", content: spec.system }];
  for (const m of spec.messages) messages.push(...toParams(m));
  const params: ChatCompletionCreateParamsStreaming = {
    model: config.model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
  };
  if (spec.tools.length > 0) {
    params.tools = spec.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.input_schema },
    }));
  }
  // Compatible servers (vLLM) reject a cap that does not fit the context, so one is sent only when set.
  if (config.maxOutputTokens) {
    if (isOfficial(config.baseURL)) params.max_completion_tokens = config.maxOutputTokens;
    else params.max_tokens = config.maxOutputTokens;
  }
  return params;
}

function toParams(m: ConversationMessage): ChatCompletionMessageParam[] {
  const text = m.content.flatMap((b) => (b.type === "text" && b.text ? [b.text] : [])).join("\n\n");
  if (m.role === "user") {
    const images = m.content.flatMap((b) => (b.type === "image" ? [b] : []));
    if (images.length === 0) return text ? [{ role: "user", content: text }] : [];
    // Content parts only when there are images: text-only servers keep getting a plain string.
    const parts: ChatCompletionContentPart[] = text ? [{ type: "text", text }] : [];
    for (const b of images) {
      parts.push(
        b.data === undefined
          ? { type: "text", text: MISSING_IMAGE }
          : { type: "image_url", image_url: { url: `data:${b.mediaType};base64,${b.data}` } },
      );
    }
    return [{ role: "user", content: parts }];
  }
  if (m.role === "tool") {
    return m.content.flatMap((b) =>
      b.type === "tool_result" ? [{ role: "tool" as const, tool_call_id: b.id, content: b.content }] : [],
    );
  }
  const calls = m.content.flatMap((b) =>
    b.type === "tool_call"
      ? [{ id: b.id, type: "function" as const, function: { name: b.name, arguments: replayArguments(b.arguments) } }]
      : [],
  );
  // Reasoning is not sent back: DeepSeek answers 400 when reasoning_content is in the input.
  if (!text && calls.length === 0) return [];
  return [{ role: "assistant", content: text || null, ...(calls.length ? { tool_calls: calls } : {}) }];
}

/** Some servers (vLLM chat templates) parse replayed arguments: damaged ones go back repaired
 *  (as the pipeline ran them), or as `{}` where the ladder could not repair them. */
function replayArguments(raw: string): string {
  const r = parseArguments(raw);
  if (!r.ok) return "{}";
  return r.repairs.length === 0 && !/^\s*$/.test(raw) ? raw : JSON.stringify(r.value);
}

type Delta = ChatCompletionChunk.Choice.Delta & { reasoning_content?: string | null; reasoning?: string | null };
type WireUsage = NonNullable<ChatCompletionChunk["usage"]> & { prompt_cache_hit_tokens?: number };

function usageOf(u: WireUsage): Usage {
  const cached = u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens ?? 0;
  const written = (u.prompt_tokens_details as { cache_write_tokens?: number } | undefined)?.cache_write_tokens ?? 0;
  return {
    inputTokens: Math.max(0, (u.prompt_tokens ?? 0) - cached - written),
    outputTokens: u.completion_tokens ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: written,
  };
}

export function createOpenAIAdapter(config: ProviderConfig): ProviderAdapter {
  // The SDK (a hundred-odd modules) loads with the first request, not with the server's start.
  let client: Promise<OpenAI> | undefined;
  const clientOf = () =>
    (client ??= import("openai").then(
      ({ default: Sdk }) =>
        new Sdk({ apiKey: config.apiKey, baseURL: config.baseURL, maxRetries: 0, fetch: httpFetch }),
    ));
  return {
    kind: "openai",
    model: config.model,
    async *stream(spec: ModelRequestSpec, signal: AbortSignal): AsyncGenerator<StreamEvent> {
      // Provider index → our index; a new id at a used index (Ollama) opens a new call.
      const slots = new Map<number, { index: number; id: string; name: string; started: boolean; args: string }>();
      let next = 0;
      let finishRaw: string | null = null;
      try {
        const stream = await (await clientOf()).chat.completions.create(openaiRequest(spec, config), { signal });
        for await (const chunk of stream) {
          if (chunk.usage) yield { type: "usage", usage: usageOf(chunk.usage as WireUsage) };
          const choice = chunk.choices?.[0];
          if (!choice) continue;
          const delta = (choice.delta ?? {}) as Delta;
          const reasoning = delta.reasoning_content ?? delta.reasoning;
          if (reasoning) yield { type: "reasoning", text: reasoning };
          if (delta.content) yield { type: "text", text: delta.content };
          for (const [pos, tc] of (delta.tool_calls ?? []).entries()) {
            const key = tc.index ?? pos;
            let slot = slots.get(key);
            if (!slot || (tc.id && slot.id && tc.id !== slot.id && slot.name)) {
              if (slot?.started) yield { type: "tool.end", index: slot.index };
              slot = { index: next++, id: tc.id ?? "", name: "", started: false, args: "" };
              slots.set(key, slot);
            }
            if (tc.id && !slot.id) slot.id = tc.id;
            if (tc.function?.name) slot.name += tc.function.name;
            const args = tc.function?.arguments ?? "";
            if (!slot.started && slot.name) {
              slot.started = true;
              yield { type: "tool.start", index: slot.index, id: slot.id || `call_${slot.index}`, name: slot.name };
              if (slot.args) yield { type: "tool.delta", index: slot.index, argumentsDelta: slot.args };
            }
            if (args) {
              if (slot.started) yield { type: "tool.delta", index: slot.index, argumentsDelta: args };
              else slot.args += args;
            }
          }
          if (choice.finish_reason) finishRaw = choice.finish_reason;
        }
      } catch (err) {
        if (isAbort(err, signal)) {
          yield { type: "finish", reason: "cancelled", raw: null };
          return;
        }
        yield toStreamError(err, "OpenAI-compatible");
        return;
      }
      if (signal.aborted) {
        yield { type: "finish", reason: "cancelled", raw: null };
        return;
      }
      const started = [...new Set(slots.values())].filter((s) => s.started);
      for (const s of started) yield { type: "tool.end", index: s.index };
      if (finishRaw === null) {
        yield {
          type: "error",
          code: "stream_incomplete",
          retryable: true,
          message: "The OpenAI-compatible stream ended without a finish_reason.",
        };
        return;
      }
      const reason: FinishReason = finishRaw === "length" ? "max_tokens" : started.length > 0 ? "tool_use" : "end_turn";
      yield { type: "finish", reason, raw: finishRaw };
    },
  };
}
