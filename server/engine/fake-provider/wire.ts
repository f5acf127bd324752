// The two real SSE wire formats, produced from a scripted response: Anthropic Messages
// (message_start, content_block_*, message_delta, message_stop) and OpenAI chat completion
// chunks (delta.content, delta.tool_calls by index, finish_reason, usage, [DONE]).
import type { ScriptResponse } from "./script";

const sse = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;

/** Splits on code points, so a delta never cuts a character (the byte splitter does that). */
function pieces(text: string, size: number): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

function stopOf(r: ScriptResponse): "end_turn" | "tool_use" | "max_tokens" {
  return r.stop ?? (r.blocks.some((b) => b.type === "tool_call") ? "tool_use" : "end_turn");
}

export function anthropicEvents(r: ScriptResponse, model: string, n: number): string[] {
  const u = r.usage ?? { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };
  const out: string[] = [];
  out.push(
    sse(
      {
        type: "message_start",
        message: {
          id: `msg_fake_${n}`,
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: u.input,
            output_tokens: 1,
            cache_read_input_tokens: u.cacheRead,
            cache_creation_input_tokens: u.cacheWrite,
          },
        },
      },
      "message_start",
    ),
  );
  out.push(sse({ type: "ping" }, "ping"));
  r.blocks.forEach((b, index) => {
    const start = (content_block: unknown) =>
      out.push(sse({ type: "content_block_start", index, content_block }, "content_block_start"));
    const delta = (d: unknown) =>
      out.push(sse({ type: "content_block_delta", index, delta: d }, "content_block_delta"));
    if (b.type === "text") {
      start({ type: "text", text: "" });
      for (const p of pieces(b.text, r.deltaChars)) delta({ type: "text_delta", text: p });
    } else if (b.type === "thinking") {
      start({ type: "thinking", thinking: "", signature: "" });
      for (const p of pieces(b.text, r.deltaChars)) delta({ type: "thinking_delta", thinking: p });
      delta({ type: "signature_delta", signature: b.signature ?? `sig_${n}_${index}` });
    } else if (b.type === "redacted_thinking") {
      start({ type: "redacted_thinking", data: b.data });
    } else {
      start({ type: "tool_use", id: b.id ?? `toolu_fake_${n}_${index}`, name: b.name, input: {} });
      for (const p of pieces(b.arguments, r.deltaChars)) delta({ type: "input_json_delta", partial_json: p });
    }
    out.push(sse({ type: "content_block_stop", index }, "content_block_stop"));
  });
  if (r.midStreamError) {
    out.push(
      sse({ type: "error", error: { type: r.midStreamError.type, message: r.midStreamError.message } }, "error"),
    );
    return out;
  }
  out.push(
    sse(
      {
        type: "message_delta",
        delta: { stop_reason: stopOf(r), stop_sequence: null },
        usage: { output_tokens: u.output },
      },
      "message_delta",
    ),
  );
  out.push(sse({ type: "message_stop" }, "message_stop"));
  return out;
}

export function openaiEvents(r: ScriptResponse, model: string, n: number, includeUsage: boolean): string[] {
  const q = r.quirks ?? {};
  const u = r.usage ?? { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };
  const base = { id: `chatcmpl-fake-${n}`, object: "chat.completion.chunk", created: 1_700_000_000, model };
  const chunk = (delta: unknown, finish_reason: string | null = null) =>
    sse({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason }] });
  const out: string[] = [chunk({ role: "assistant", content: "" })];
  if (q.comments) out.push(": OPENROUTER PROCESSING\n\n");
  let callIndex = 0;
  r.blocks.forEach((b, blockIndex) => {
    if (b.type === "text") for (const p of pieces(b.text, r.deltaChars)) out.push(chunk({ content: p }));
    else if (b.type === "thinking")
      for (const p of pieces(b.text, r.deltaChars)) out.push(chunk({ [q.reasoningField ?? "reasoning_content"]: p }));
    else if (b.type === "tool_call") {
      const index = q.sameIndex ? 0 : callIndex;
      callIndex++;
      const id = q.noIds ? undefined : (b.id ?? `call_fake_${n}_${blockIndex}`);
      if (q.wholeToolCalls) {
        out.push(
          chunk({ tool_calls: [{ index, id, type: "function", function: { name: b.name, arguments: b.arguments } }] }),
        );
      } else {
        out.push(chunk({ tool_calls: [{ index, id, type: "function", function: { name: b.name, arguments: "" } }] }));
        for (const p of pieces(b.arguments, r.deltaChars))
          out.push(chunk({ tool_calls: [{ index, function: { arguments: p } }] }));
      }
    }
  });
  if (r.midStreamError) {
    out.push(sse({ error: { message: r.midStreamError.message, type: r.midStreamError.type, code: 502 } }));
    return out;
  }
  const stop = stopOf(r);
  const finish = stop === "max_tokens" ? "length" : stop === "tool_use" && !q.finishStop ? "tool_calls" : "stop";
  out.push(chunk({}, finish));
  if (includeUsage) {
    const usage = q.deepseekUsage
      ? {
          prompt_tokens: u.input + u.cacheRead,
          completion_tokens: u.output,
          total_tokens: u.input + u.cacheRead + u.output,
          prompt_cache_hit_tokens: u.cacheRead,
          prompt_cache_miss_tokens: u.input,
        }
      : {
          prompt_tokens: u.input + u.cacheRead,
          completion_tokens: u.output,
          total_tokens: u.input + u.cacheRead + u.output,
          prompt_tokens_details: { cached_tokens: u.cacheRead },
        };
    out.push(sse({ ...base, choices: [], usage }));
  }
  out.push("data: [DONE]\n\n");
  return out;
}

export function errorBody(
  format: "anthropic" | "openai",
  status: number,
  type: string | undefined,
  message: string,
): string {
  const t =
    type ??
    (status === 429
      ? "rate_limit_error"
      : status === 529
        ? "overloaded_error"
        : status >= 500
          ? "api_error"
          : "invalid_request_error");
  return format === "anthropic"
    ? JSON.stringify({ type: "error", error: { type: t, message } })
    : JSON.stringify({ error: { message, type: t, code: null, param: null } });
}
