// Both adapters against the fake provider over real HTTP with the real SDK clients: every
// scripted case of the issue, for both wire formats.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../fake-provider/server";
import { assemble, fakeConfig, fastRetries } from "../../testing/engine";
import type { ModelRequestSpec, ProviderKind } from "../types";
import { createAdapter, streamWithRetries } from "./index";

const spec: ModelRequestSpec = {
  system: "You are a test.",
  tools: [
    {
      name: "read_file",
      description: "Read a file.",
      input_schema: { type: "object", properties: { path: { type: "string" } } },
    },
  ],
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
};

describe.each<ProviderKind>(["anthropic", "openai"])("%s adapter against the fake provider", (kind) => {
  let fake: FakeProvider;
  beforeAll(async () => {
    fake = await startFakeProvider();
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.requests.length = 0;
  });
  const run = (signal: AbortSignal) =>
    assemble(streamWithRetries(createAdapter(fakeConfig(kind, fake)), spec, signal, fastRetries));
  const never = () => new AbortController().signal;

  it("streams a text turn and its usage", async () => {
    fake.enqueue({
      blocks: [{ type: "text", text: "Hello there, world." }],
      usage: { input: 12, output: 7, cacheRead: 30, cacheWrite: 4 },
    });
    const a = await run(never());
    expect(a.text).toBe("Hello there, world.");
    expect(a.finish).toEqual({ reason: "end_turn", raw: kind === "anthropic" ? "end_turn" : "stop" });
    expect(a.usage).toEqual({
      inputTokens: 12,
      outputTokens: 7,
      cacheReadTokens: 30,
      cacheWriteTokens: kind === "anthropic" ? 4 : 0,
    });
    expect(a.errors).toEqual([]);
  });

  it("reassembles chunks cut inside JSON strings and UTF-8 characters", async () => {
    const args = JSON.stringify({ path: "src/日本語/ファイル😀.ts", note: 'quote " and \\ backslash' });
    fake.enqueue({
      blocks: [
        { type: "text", text: "Läuft — 🚀 ok" },
        { type: "tool_call", name: "read_file", arguments: args },
      ],
      chunkBytes: [1, 2, 3, 5, 7],
      deltaChars: 3,
    });
    const a = await run(never());
    expect(a.text).toBe("Läuft — 🚀 ok");
    expect(a.calls).toHaveLength(1);
    expect(a.calls[0]).toMatchObject({ name: "read_file", arguments: args, ended: true });
    expect(a.finish?.reason).toBe("tool_use");
  });

  it("collects several parallel tool calls in order", async () => {
    fake.enqueue({
      blocks: [
        { type: "tool_call", id: "c1", name: "read_file", arguments: '{"path":"a"}' },
        { type: "tool_call", id: "c2", name: "read_file", arguments: '{"path":"b"}' },
        { type: "tool_call", id: "c3", name: "grep", arguments: '{"pattern":"x"}' },
      ],
    });
    const a = await run(never());
    expect(a.calls.map((c) => [c.id, c.name, c.arguments, c.ended])).toEqual([
      ["c1", "read_file", '{"path":"a"}', true],
      ["c2", "read_file", '{"path":"b"}', true],
      ["c3", "grep", '{"pattern":"x"}', true],
    ]);
  });

  it("passes damaged argument JSON through untouched", async () => {
    fake.enqueue({ blocks: [{ type: "tool_call", name: "read_file", arguments: '{"path": "a.ts",, "x": [1, 2' }] });
    const a = await run(never());
    expect(a.calls[0].arguments).toBe('{"path": "a.ts",, "x": [1, 2');
    expect(a.finish?.reason).toBe("tool_use");
  });

  it("reports a max_tokens / length cut-off", async () => {
    fake.enqueue({
      blocks: [
        { type: "text", text: "partial" },
        { type: "tool_call", name: "read_file", arguments: '{"pa' },
      ],
      stop: "max_tokens",
    });
    const a = await run(never());
    expect(a.finish).toEqual({ reason: "max_tokens", raw: kind === "anthropic" ? "max_tokens" : "length" });
    expect(a.calls[0].arguments).toBe('{"pa');
  });

  it("retries a 429 after the retry-after it was given, then succeeds", async () => {
    fake.enqueue(
      { kind: "http_error", status: 429, retryAfter: "0.05" },
      { blocks: [{ type: "text", text: "after wait" }] },
    );
    const a = await run(never());
    expect(a.retries).toEqual([50]);
    expect(a.text).toBe("after wait");
    expect(fake.requests).toHaveLength(2);
  });

  it("gives up on repeated 500s with one clear error", async () => {
    fake.enqueue(
      { kind: "http_error", status: 500 },
      { kind: "http_error", status: 500 },
      { kind: "http_error", status: 503 },
    );
    const a = await run(never());
    expect(a.retries).toHaveLength(2);
    expect(a.errors).toHaveLength(1);
    expect(a.errors[0].code).toBe("provider_server_error");
    expect(a.errors[0].message).toMatch(/after 3 attempts/);
    expect(fake.requests).toHaveLength(3);
  });

  it("does not retry a client error", async () => {
    fake.enqueue({ kind: "http_error", status: 400, message: "bad field" });
    const a = await run(never());
    expect(a.retries).toEqual([]);
    expect(a.errors[0]).toMatchObject({ code: "provider_rejected", retryable: false });
    expect(a.errors[0].message).toContain("bad field");
  });

  it("surfaces a mid-stream error without retrying text already shown", async () => {
    fake.enqueue({
      blocks: [{ type: "text", text: "half an answer" }],
      midStreamError: { type: "overloaded_error", message: "Overloaded" },
    });
    const a = await run(never());
    expect(a.text).toBe("half an answer");
    expect(a.retries).toEqual([]);
    expect(a.errors[0].retryable).toBe(true);
    expect(a.errors[0].message).toContain("Overloaded");
    expect(fake.requests).toHaveLength(1);
  });

  it("cancel aborts a stalled stream at once", async () => {
    fake.enqueue({ blocks: [{ type: "text", text: "first words and then a long silence" }], hangAfterBytes: 700 });
    const ctl = new AbortController();
    const seen: string[] = [];
    const stream = streamWithRetries(createAdapter(fakeConfig(kind, fake)), spec, ctl.signal, fastRetries);
    let finish: string | undefined;
    for await (const ev of stream) {
      if (ev.type === "text") {
        seen.push(ev.text);
        ctl.abort();
      }
      if (ev.type === "finish") finish = ev.reason;
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(finish).toBe("cancelled");
  });

  it("a consumer that stops reading early closes the attempt's stream", async () => {
    fake.enqueue({ blocks: [{ type: "text", text: "first words and then a long silence" }], hangAfterBytes: 700 });
    const stream = streamWithRetries(createAdapter(fakeConfig(kind, fake)), spec, never(), fastRetries);
    let text = "";
    for await (const ev of stream) {
      if (ev.type !== "text") continue;
      text = ev.text;
      expect(fake.streaming()).toBe(1);
      break;
    }
    expect(text.length).toBeGreaterThan(0);
    await expect.poll(() => fake.streaming(), { timeout: 5_000 }).toBe(0);
    expect(await stream.next()).toEqual({ done: true, value: undefined });
    expect(fake.requests).toHaveLength(1);
  });

  it("keeps reasoning (Anthropic thinking with its signature)", async () => {
    fake.enqueue({
      blocks: [
        { type: "thinking", text: "Let me think.", signature: "SIG123" },
        { type: "text", text: "Done." },
      ],
    });
    const a = await run(never());
    expect(a.reasoning).toBe("Let me think.");
    expect(a.text).toBe("Done.");
    if (kind === "anthropic")
      expect(a.reasoningBlocks).toEqual([{ type: "reasoning.block", text: "Let me think.", signature: "SIG123" }]);
  });
});
