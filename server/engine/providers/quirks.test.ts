// OpenAI-compatible servers' differences (Ollama, DeepSeek, OpenRouter, vLLM) as the fake
// provider imitates them, request shapes for both APIs, and provider resolution from env.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../fake-provider/server";
import { assemble, fakeConfig, fastRetries } from "../../testing/engine";
import type { ModelRequestSpec } from "../types";
import { anthropicRequest } from "./anthropic";
import { createAdapter, modelChoices, notConfiguredMessage, resolveProvider, streamWithRetries } from "./index";
import { openaiRequest } from "./openai";

const spec: ModelRequestSpec = {
  system: "S",
  tools: [],
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
};

describe("OpenAI-compatible server quirks", () => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterAll(() => fake.close());
  const run = () =>
    assemble(
      streamWithRetries(createAdapter(fakeConfig("openai", fake)), spec, new AbortController().signal, fastRetries),
    );
  const two = [
    { type: "tool_call" as const, id: "a", name: "ls", arguments: '{"p":1}' },
    { type: "tool_call" as const, id: "b", name: "cat", arguments: '{"p":2}' },
  ];

  it("Ollama: whole calls in one chunk, all at index 0, finish_reason stop", async () => {
    fake.enqueue({ blocks: two, quirks: { wholeToolCalls: true, sameIndex: true, finishStop: true } });
    const a = await run();
    expect(a.calls.map((c) => [c.id, c.name, c.arguments])).toEqual([
      ["a", "ls", '{"p":1}'],
      ["b", "cat", '{"p":2}'],
    ]);
    expect(a.finish).toEqual({ reason: "tool_use", raw: "stop" });
  });

  it("servers without call ids get stable generated ones", async () => {
    fake.enqueue({ blocks: two, quirks: { noIds: true } });
    const a = await run();
    expect(a.calls.map((c) => c.id)).toEqual(["call_0", "call_1"]);
  });

  it("DeepSeek: reasoning_content and prompt_cache_hit_tokens", async () => {
    fake.enqueue({
      blocks: [
        { type: "thinking", text: "hmm" },
        { type: "text", text: "ok" },
      ],
      usage: { input: 7, output: 3, cacheRead: 90, cacheWrite: 0 },
      quirks: { deepseekUsage: true },
    });
    const a = await run();
    expect(a.reasoning).toBe("hmm");
    expect(a.usage).toEqual({ inputTokens: 7, outputTokens: 3, cacheReadTokens: 90, cacheWriteTokens: 0 });
  });

  it("OpenRouter: `reasoning` field and SSE comment keep-alives", async () => {
    fake.enqueue({
      blocks: [
        { type: "thinking", text: "why" },
        { type: "text", text: "because" },
      ],
      quirks: { reasoningField: "reasoning", comments: true },
    });
    const a = await run();
    expect(a.reasoning).toBe("why");
    expect(a.text).toBe("because");
  });

  it("asks for usage in the stream and sends a token cap only when configured", () => {
    const plain = openaiRequest(spec, {
      kind: "openai",
      model: "m",
      apiKey: "k",
      baseURL: "http://localhost:11434/v1",
    });
    expect(plain.stream_options).toEqual({ include_usage: true });
    expect(plain).not.toHaveProperty("max_tokens");
    expect(
      openaiRequest(spec, {
        kind: "openai",
        model: "m",
        apiKey: "k",
        baseURL: "http://vllm:8000/v1",
        maxOutputTokens: 100,
      }).max_tokens,
    ).toBe(100);
    expect(
      openaiRequest(spec, { kind: "openai", model: "m", apiKey: "k", maxOutputTokens: 100 }).max_completion_tokens,
    ).toBe(100);
  });

  it("replays damaged arguments as {} and never sends reasoning back", () => {
    const body = openaiRequest(
      {
        ...spec,
        messages: [
          ...spec.messages,
          {
            role: "assistant",
            content: [
              { type: "reasoning", text: "secret", provider: "openai" },
              { type: "tool_call", id: "c", name: "ls", arguments: '{"a":' },
            ],
          },
          { role: "tool", content: [{ type: "tool_result", id: "c", name: "ls", content: "bad args", isError: true }] },
        ],
      },
      { kind: "openai", model: "m", apiKey: "k" },
    );
    expect(body.messages.slice(2)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c", type: "function", function: { name: "ls", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c", content: "bad args" },
    ]);
  });
});

describe("Anthropic request shape", () => {
  it("merges results and the next user text into one user message, breakpoint on its last block", () => {
    const body = anthropicRequest(
      {
        system: "S",
        tools: [{ name: "ls", description: "d", input_schema: { type: "object" } }],
        messages: [
          { role: "user", content: [{ type: "text", text: "hi" }] },
          {
            role: "assistant",
            content: [
              { type: "reasoning", text: "t", signature: "sig", provider: "anthropic" },
              { type: "reasoning", text: "", redactedData: "opaque", provider: "anthropic" },
              { type: "tool_call", id: "c", name: "ls", arguments: "{}" },
            ],
          },
          {
            role: "tool",
            content: [{ type: "tool_result", id: "c", name: "ls", content: "cancelled", isError: true }],
          },
          { role: "user", content: [{ type: "text", text: "next" }] },
        ],
      },
      { kind: "anthropic", model: "m", apiKey: "k" },
    );
    expect(body.max_tokens).toBe(8192);
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "hi" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "t", signature: "sig" },
          { type: "redacted_thinking", data: "opaque" },
          { type: "tool_use", id: "c", name: "ls", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "c", content: "cancelled", is_error: true },
          { type: "text", text: "next", cache_control: { type: "ephemeral" } },
        ],
      },
    ]);
  });
});

describe("provider resolution", () => {
  it("says how to configure a provider when none is", () => {
    expect(resolveProvider({})).toEqual({ ok: false, message: notConfiguredMessage });
    const r = resolveProvider({ QUIVER_PROVIDER: "anthropic" });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toMatch(/ANTHROPIC_API_KEY is not set/);
  });

  it("picks the session's choice, then QUIVER_PROVIDER, then whichever key is set", () => {
    const env = { ANTHROPIC_API_KEY: "a", OPENAI_BASE_URL: "http://localhost:11434/v1", QUIVER_MODEL: "claude-x" };
    expect(resolveProvider(env)).toMatchObject({
      ok: true,
      config: { kind: "anthropic", model: "claude-x", apiKey: "a" },
    });
    expect(resolveProvider(env, { provider: "openai", model: "llama3" })).toMatchObject({
      ok: true,
      config: { kind: "openai", model: "llama3", apiKey: "not-needed", baseURL: "http://localhost:11434/v1" },
    });
    expect(resolveProvider({ ...env, QUIVER_PROVIDER: "openai", QUIVER_MODEL: "qwen" })).toMatchObject({
      ok: true,
      config: { kind: "openai", model: "qwen" },
    });
    expect(resolveProvider(env, { provider: "openai" })).toMatchObject({
      ok: true,
      config: { kind: "openai", model: "gpt-4.1" },
    });
    expect(resolveProvider(env, { provider: "gemini" })).toMatchObject({ ok: false });
  });

  it("offers the model picker each provider, what an unconfigured one needs, and the server's default", () => {
    expect(modelChoices({})).toEqual({
      providers: [
        { kind: "anthropic", configured: false, defaultModel: "claude-sonnet-5-5", needs: "ANTHROPIC_API_KEY" },
        { kind: "openai", configured: false, defaultModel: "gpt-4.1", needs: "OPENAI_API_KEY or OPENAI_BASE_URL" },
      ],
      fallback: null,
    });
    // QUIVER_MODEL is the default provider's model; the other provider keeps its own default.
    const env = {
      ANTHROPIC_API_KEY: "a",
      OPENAI_BASE_URL: "http://localhost:11434/v1",
      QUIVER_PROVIDER: "openai" as const,
      QUIVER_MODEL: "qwen",
    };
    expect(modelChoices(env)).toEqual({
      providers: [
        { kind: "anthropic", configured: true, defaultModel: "claude-sonnet-5-5" },
        { kind: "openai", configured: true, defaultModel: "qwen" },
      ],
      fallback: { provider: "openai", model: "qwen" },
    });
  });
});
