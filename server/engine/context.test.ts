// Context windows: the guess from a model's name, the override, and what providers' overflow
// answers say (their real wording).
import { describe, expect, it } from "vitest";
import { ContextWindows, RecentContext, contextOverflow, contextTokens, guessContextWindow } from "./context";
import { conversationFrom, summaryPrompt, type SummaryBlock } from "./history";
import { parseEnv } from "../env";

describe("context windows", () => {
  it("guesses from the model's name, then the provider", () => {
    expect(guessContextWindow("anthropic", "claude-sonnet-4-5")).toBe(200_000);
    expect(guessContextWindow("openai", "gpt-4.1-mini")).toBe(1_047_576);
    expect(guessContextWindow("openai", "gpt-4o")).toBe(128_000);
    expect(guessContextWindow("openai", "o3-mini")).toBe(200_000);
    expect(guessContextWindow("openai", "deepseek-chat")).toBe(128_000);
    expect(guessContextWindow("openai", "llama3.1:8b")).toBe(32_768);
    expect(guessContextWindow("openai", "some-private-model")).toBe(128_000);
  });

  it("takes the configured window over the guess, and what a provider said over both", () => {
    const w = new ContextWindows(50_000);
    expect(w.of("anthropic", "claude-x")).toBe(50_000);
    w.learn("anthropic", "claude-x", 180_000);
    expect(w.of("anthropic", "claude-x")).toBe(180_000);
    expect(w.of("anthropic", "claude-y")).toBe(50_000);
    expect(new ContextWindows().of("anthropic", "claude-y")).toBe(200_000);
  });

  it("reads QUIVER_CONTEXT_WINDOW at boot, refusing a value that is no window", () => {
    expect(parseEnv({ QUIVER_CONTEXT_WINDOW: "32768" }).QUIVER_CONTEXT_WINDOW).toBe(32_768);
    expect(parseEnv({}).QUIVER_CONTEXT_WINDOW).toBeUndefined();
    expect(() => parseEnv({ QUIVER_CONTEXT_WINDOW: "lots" })).toThrow(/Invalid QUIVER_CONTEXT_WINDOW/);
    expect(() => parseEnv({ QUIVER_CONTEXT_WINDOW: "100" })).toThrow(/at least 1024 tokens/);
  });

  it("recognizes overflow answers and reads the window they name", () => {
    expect(
      contextOverflow(
        "The anthropic API rejected the request (400): prompt is too long: 208310 tokens > 200000 maximum",
      ),
    ).toEqual({ window: 200_000 });
    expect(
      contextOverflow("This model's maximum context length is 65536 tokens. However, you requested 70012 tokens"),
    ).toEqual({ window: 65_536 });
    expect(contextOverflow("Error code: context_length_exceeded")).toEqual({});
    expect(contextOverflow("The input exceeds the context window of this model")).toEqual({});
    expect(contextOverflow("The openai API rate-limited the request: too many requests")).toBeUndefined();
    expect(contextOverflow("invalid x-api-key")).toBeUndefined();
  });

  it("counts a request's whole prompt, cached or not, and its reply", () => {
    expect(contextTokens({ inputTokens: 10, cacheReadTokens: 1000, cacheWriteTokens: 100, outputTokens: 5 })).toBe(
      1115,
    );
  });
});

describe("the conversation after a summary", () => {
  const text = (role: string, t: string) => ({ role, content: [{ type: "text", text: t }] });
  const summary = (s: Partial<SummaryBlock>) => ({
    role: "user",
    content: [{ type: "summary", text: "S", keep: 0, midTurn: false, ...s }],
  });

  it("starts at the latest summary, the messages it kept merged into its user message", () => {
    const stored = [
      text("user", "a"),
      text("assistant", "b"),
      text("user", "c"),
      summary({ keep: 1 }),
      text("assistant", "d"),
    ];
    const out = conversationFrom(stored);
    expect(out).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: summaryPrompt({ type: "summary", text: "S", keep: 1, midTurn: false }) },
          { type: "text", text: "c" },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "d" }] },
    ]);
  });

  it("asks the model to go on after a summary made inside a turn, and only the latest summary counts", () => {
    const stored = [
      text("user", "a"),
      summary({ text: "old" }),
      text("assistant", "b"),
      summary({ text: "new", midTurn: true }),
    ];
    const out = conversationFrom(stored);
    expect(out).toHaveLength(1);
    expect(out[0].content[0]).toMatchObject({ type: "text" });
    const prompt = (out[0].content[0] as { text: string }).text;
    expect(prompt).toContain("new");
    expect(prompt).not.toContain("old");
    expect(prompt).toContain("Continue the task from where it stopped.");
  });

  it("is the stored conversation itself when nothing was summarized", () => {
    const stored = [text("user", "a"), text("assistant", "b")];
    expect(conversationFrom(stored)).toEqual(stored);
  });
});

describe("recent context figures", () => {
  it("keeps the sessions used most recently and forgets the oldest past its limit", () => {
    const recent = new RecentContext(3);
    for (const id of ["a", "b", "c"]) recent.set(id, 10);
    recent.set("a", 20); // used again: now the newest
    recent.set("d", 30);
    expect(recent.size).toBe(3);
    expect(recent.get("b")).toBeUndefined();
    expect([recent.get("a"), recent.get("c"), recent.get("d")]).toEqual([20, 10, 30]);
  });
});
