// Anthropic Messages adapter: builds the request from the neutral conversation (thinking blocks
// sent back verbatim with their signatures, cache breakpoints on the system block and on the
// latest message) and turns the content_block_* stream into StreamEvents.
import type Anthropic from "@anthropic-ai/sdk";
import { MISSING_IMAGE } from "../images";
import type {
  ContentBlock,
  ConversationMessage,
  FinishReason,
  ModelRequestSpec,
  ProviderAdapter,
  ProviderConfig,
  StreamEvent,
} from "../types";
import { isAbort, toStreamError } from "./errors";
import { httpFetch } from "./http-fetch";
import { argumentsObject, mergeSameRole } from "./shared";

type Param = Anthropic.MessageCreateParamsStreaming;
type Block = Anthropic.ContentBlockParam;
const ephemeral = { type: "ephemeral" as const };

export function anthropicRequest(spec: ModelRequestSpec, config: ProviderConfig): Param {
  const messages = mergeSameRole(spec.messages)
    .map(toParam)
    .filter((m) => (m.content as Block[]).length > 0);
  const last = messages.at(-1);
  if (last) {
    const blocks = last.content as Block[];
    const tail = blocks.at(-1);
    if (tail && tail.type !== "thinking" && tail.type !== "redacted_thinking")
      blocks[blocks.length - 1] = { ...tail, cache_control: ephemeral } as Block;
  }
  const params: Param = {
    model: config.model,
    max_tokens: config.maxOutputTokens ?? 8192,
    // Tools precede the system prompt in Anthropic's cache order, so this breakpoint covers both.
    system: [{ type: "text", text: spec.system, cache_control: ephemeral }],
    messages,
    stream: true,
  };
  if (spec.tools.length > 0) {
    params.tools = spec.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: t.input_schema as Anthropic.Tool.InputSchema,
    }));
  }
  if (config.thinkingBudget) params.thinking = { type: "enabled", budget_tokens: config.thinkingBudget };
  return params;
}

function toParam(m: ConversationMessage): Anthropic.MessageParam {
  const role = m.role === "assistant" ? "assistant" : "user";
  return { role, content: m.content.flatMap(toBlock) };
}

function toBlock(b: ContentBlock): Block[] {
  switch (b.type) {
    case "text":
      return b.text ? [{ type: "text", text: b.text }] : [];
    case "reasoning":
      if (b.provider !== "anthropic") return [];
      if (b.redactedData !== undefined) return [{ type: "redacted_thinking", data: b.redactedData }];
      return b.signature ? [{ type: "thinking", thinking: b.text, signature: b.signature }] : [];
    case "tool_call":
      return [{ type: "tool_use", id: b.id, name: b.name, input: argumentsObject(b.arguments) }];
    case "tool_result":
      return [{ type: "tool_result", tool_use_id: b.id, content: b.content, is_error: b.isError }];
    case "image":
      return b.data === undefined
        ? [{ type: "text", text: MISSING_IMAGE }]
        : [
            {
              type: "image",
              source: {
                type: "base64",
                media_type: b.mediaType as Anthropic.Base64ImageSource["media_type"],
                data: b.data,
              },
            },
          ];
  }
}

const finishOf = (raw: string | null): FinishReason =>
  raw === "tool_use"
    ? "tool_use"
    : raw === "max_tokens" || raw === "model_context_window_exceeded"
      ? "max_tokens"
      : "end_turn";

export function createAnthropicAdapter(config: ProviderConfig): ProviderAdapter {
  // The SDK (a few hundred modules) loads with the first request, not with the server's start.
  let client: Promise<Anthropic> | undefined;
  const clientOf = () =>
    (client ??= import("@anthropic-ai/sdk").then(
      ({ default: Sdk }) =>
        new Sdk({ apiKey: config.apiKey, baseURL: config.baseURL ?? null, maxRetries: 0, fetch: httpFetch }),
    ));
  return {
    kind: "anthropic",
    model: config.model,
    async *stream(spec, signal): AsyncGenerator<StreamEvent> {
      const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
      // Block index → tool index: downstream numbers tool calls 0..n-1 in the model's order.
      const blocks = new Map<
        number,
        { kind: string; thinking: string; signature: string; data?: string; tool?: number }
      >();
      let tools = 0;
      let stopReason: string | null = null;
      let done = false;
      try {
        const stream = await (await clientOf()).messages.create(anthropicRequest(spec, config), { signal });
        for await (const ev of stream) {
          switch (ev.type) {
            case "message_start": {
              const u = ev.message.usage;
              usage.inputTokens = u.input_tokens ?? 0;
              usage.cacheReadTokens = u.cache_read_input_tokens ?? 0;
              usage.cacheWriteTokens = u.cache_creation_input_tokens ?? 0;
              usage.outputTokens = u.output_tokens ?? 0;
              yield { type: "usage", usage: { ...usage } };
              break;
            }
            case "content_block_start": {
              const cb = ev.content_block;
              const tool = cb.type === "tool_use" ? tools++ : undefined;
              blocks.set(ev.index, {
                kind: cb.type,
                thinking: "",
                signature: "",
                data: cb.type === "redacted_thinking" ? cb.data : undefined,
                tool,
              });
              if (cb.type === "tool_use") yield { type: "tool.start", index: tool!, id: cb.id, name: cb.name };
              else if (cb.type === "text" && cb.text) yield { type: "text", text: cb.text };
              else if (cb.type === "thinking" && cb.thinking) {
                blocks.get(ev.index)!.thinking = cb.thinking;
                yield { type: "reasoning", text: cb.thinking };
              }
              break;
            }
            case "content_block_delta": {
              const d = ev.delta;
              const block = blocks.get(ev.index);
              if (d.type === "text_delta") yield { type: "text", text: d.text };
              else if (d.type === "input_json_delta" && block?.tool !== undefined)
                yield { type: "tool.delta", index: block.tool, argumentsDelta: d.partial_json };
              else if (d.type === "thinking_delta") {
                if (block) block.thinking += d.thinking;
                yield { type: "reasoning", text: d.thinking };
              } else if (d.type === "signature_delta" && block) block.signature += d.signature;
              break;
            }
            case "content_block_stop": {
              const block = blocks.get(ev.index);
              if (block?.tool !== undefined) yield { type: "tool.end", index: block.tool };
              else if (block?.kind === "thinking")
                yield { type: "reasoning.block", text: block.thinking, signature: block.signature };
              else if (block?.kind === "redacted_thinking")
                yield { type: "reasoning.block", text: "", redactedData: block.data ?? "" };
              break;
            }
            case "message_delta": {
              stopReason = ev.delta.stop_reason ?? stopReason;
              const u = ev.usage;
              usage.outputTokens = u.output_tokens ?? usage.outputTokens;
              if (u.input_tokens != null) usage.inputTokens = u.input_tokens;
              if (u.cache_read_input_tokens != null) usage.cacheReadTokens = u.cache_read_input_tokens;
              if (u.cache_creation_input_tokens != null) usage.cacheWriteTokens = u.cache_creation_input_tokens;
              yield { type: "usage", usage: { ...usage } };
              break;
            }
            case "message_stop":
              done = true;
              yield { type: "finish", reason: finishOf(stopReason), raw: stopReason };
              break;
          }
        }
      } catch (err) {
        if (isAbort(err, signal)) {
          yield { type: "finish", reason: "cancelled", raw: null };
          return;
        }
        yield toStreamError(err, "Anthropic");
        return;
      }
      if (done) return;
      if (signal.aborted) yield { type: "finish", reason: "cancelled", raw: null };
      else
        yield {
          type: "error",
          code: "stream_incomplete",
          retryable: true,
          message: "The Anthropic stream ended before message_stop.",
        };
    },
  };
}
