// Compaction end to end: real SDK clients against the fake provider, real SQLite and PostgreSQL,
// the event hub. A small context window (QUIVER_CONTEXT_WINDOW) and scripted usage put the
// conversation near its limit, or a scripted overflow answer past it.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestDb } from "../testing/db";
import { createEventHub, type EventHub } from "../hub/events";
import { seedSession } from "../testing/hub";
import type { FakeProvider } from "./fake-provider/server";
import { eventsUntilFinished, fakeProviderEnv, fastRetries, testDispatcher, useFakeProvider } from "../testing/engine";
import { createEngine, type Engine } from "./engine";
import { SUMMARY_REQUEST } from "./compact";
import type { ToolDefinition } from "./types";
import type { SessionEvent } from "../protocol/events";
import { engineCombos } from "../testing/engine-suite";

const tools: ToolDefinition[] = [
  {
    name: "echo",
    description: "Echo the input.",
    input_schema: { type: "object", properties: { text: { type: "string" } } },
  },
];
const combos = engineCombos();
const WINDOW = 10_000;
/** Usage that fills 90% of WINDOW, past the 80% at which compaction starts. */
const nearlyFull = { input: 8_900, output: 100 };

describe.each(combos)("compaction on %s with the %s wire format", (dbProvider, kind) => {
  const t = useTestDb(dbProvider);
  const provider = useFakeProvider();
  let fake: FakeProvider;
  let hub: EventHub;
  let engine: Engine;
  const env = (window: number) => ({ ...fakeProviderEnv(kind, fake), QUIVER_CONTEXT_WINDOW: window });
  const start = (window = WINDOW, named?: typeof dbProvider) => {
    engine = createEngine({
      db: t.current.db,
      dbProvider: named,
      rows: t.current.rows,
      hub,
      dispatcher: testDispatcher(),
      env: env(window),
      catalog: { catalog: () => tools },
      retry: fastRetries,
      systemPrompt: "SYSTEM",
    });
  };
  /** What each request sent the model, as JSON (both wire formats). */
  const sent = () => fake.requests.map((r) => JSON.stringify((r.body as { messages: unknown[] }).messages));
  /** One turn's events. */
  const turn = async (sessionId: string, userId: string, text: string) => {
    const after = await hub.lastSeq(sessionId);
    const { turnId } = await engine.sendMessage(sessionId, { userId }, text);
    return eventsUntilFinished(hub, sessionId, turnId, after);
  };
  const of = <T extends SessionEvent["type"]>(events: SessionEvent[], type: T) =>
    events.filter((e): e is Extract<SessionEvent, { type: T }> => e.type === type);

  beforeEach(() => {
    fake = provider.current;
    hub = createEventHub(t.current.db, { url: t.current.url });
    start();
  });
  afterEach(async () => {
    await engine.dispose();
    await hub.dispose();
  });

  it("summarizes the conversation before the next turn once the last request filled 80% of the window", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    fake.enqueue(
      { blocks: [{ type: "text", text: "Read the parser; it is fine." }], usage: nearlyFull },
      {
        blocks: [{ type: "text", text: "SUMMARY: the user had the parser read." }],
        usage: { input: 9_000, output: 20 },
      },
      { blocks: [{ type: "text", text: "Tests added." }], usage: { input: 300, output: 10 } },
      { blocks: [{ type: "text", text: "Ran them." }], usage: { input: 400, output: 10 } },
    );
    const first = await turn(sessionId, userId, "read the parser");
    expect(of(first, "usage").at(-1)?.context).toEqual({ tokens: 9_000, window: WINDOW });
    expect(of(first, "context.compacted")).toEqual([]);

    const second = await turn(sessionId, userId, "now add tests");
    expect(of(second, "notice")[0]).toMatchObject({ code: "context_compacting" });
    expect(of(second, "notice")[0].text).toContain("90%");
    expect(of(second, "context.compacted")).toMatchObject([
      { summary: "SUMMARY: the user had the parser read.", messages: 2, tokens: 9_000 },
    ]);
    expect(second.at(-1)).toMatchObject({ type: "turn.finished", status: "completed" });
    // Streamed nothing of the summary as the reply: only the answer after it.
    expect(
      of(second, "text.delta")
        .map((e) => e.text)
        .join(""),
    ).toBe("Tests added.");
    expect(of(second, "usage").at(-1)?.context).toEqual({ tokens: 310, window: WINDOW });

    const [, summaryRequest, afterSummary] = sent();
    // The summary request: the whole earlier conversation, then the request; not the new message.
    expect(summaryRequest).toContain("read the parser");
    expect(summaryRequest).toContain("Read the parser; it is fine.");
    expect(summaryRequest).toContain(SUMMARY_REQUEST.slice(0, 40));
    expect(summaryRequest).not.toContain("now add tests");
    // The next request starts from the summary, with the new message after it, in one user message.
    expect(afterSummary).toContain("SUMMARY: the user had the parser read.");
    expect(afterSummary).toContain("now add tests");
    expect(afterSummary).not.toContain("Read the parser; it is fine.");
    expect(afterSummary).not.toContain("Continue the task");

    // The turn after goes on from there, appending only (the cached prefix holds again).
    await turn(sessionId, userId, "run them");
    const third = sent()[3];
    const strip = (json: string) => json.replace(/,"cache_control":\{"type":"ephemeral"\}/g, "");
    expect(strip(third).startsWith(strip(afterSummary).slice(0, -1))).toBe(true);
    expect(third).toContain("run them");

    // Stored: a summary message standing for what came before, the whole history kept.
    const messages = await t.current.db.message.findMany({ where: { sessionId }, orderBy: { position: "asc" } });
    expect(messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "user",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(messages[3].content).toEqual([
      { type: "summary", text: "SUMMARY: the user had the parser read.", keep: 1, midTurn: false },
    ]);
    // Its request is recorded with the turn's others, and counted in the turn's usage.
    const turnRow = await t.current.db.turn.findFirstOrThrow({
      where: { id: second[0].type === "turn.started" ? second[0].turnId : "" },
    });
    expect(turnRow.outputTokens).toBe(30);
  });

  it("after a restart, reads how full the last request was from its row (Prisma, or plain SQL)", async () => {
    for (const named of [undefined, dbProvider]) {
      const { sessionId, userId } = await seedSession(t.current.db);
      fake.enqueue(
        { blocks: [{ type: "text", text: "Read it." }], usage: nearlyFull },
        { blocks: [{ type: "text", text: "SUMMARY: read." }], usage: { input: 9_000, output: 20 } },
        { blocks: [{ type: "text", text: "Done." }], usage: { input: 300, output: 10 } },
      );
      await turn(sessionId, userId, "read it");
      // A new engine knows nothing of the session but what is stored.
      await engine.dispose();
      start(WINDOW, named);
      const second = await turn(sessionId, userId, "go on");
      expect(of(second, "context.compacted")).toMatchObject([{ summary: "SUMMARY: read.", tokens: 9_000 }]);
      expect(second.at(-1)).toMatchObject({ type: "turn.finished", status: "completed" });
    }
  });

  it("summarizes between two requests of a turn, and the model is asked to go on", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    fake.enqueue(
      { blocks: [{ type: "text", text: "Hello." }], usage: { input: 100, output: 5 } },
      { blocks: [{ type: "tool_call", name: "echo", arguments: '{"text":"big"}' }], usage: nearlyFull },
      { blocks: [{ type: "text", text: "SUMMARY: echoing big for the user." }] },
      { blocks: [{ type: "text", text: "Echoed." }] },
    );
    await turn(sessionId, userId, "hi");
    const events = await turn(sessionId, userId, "echo big");
    expect(events.map((e) => e.type).filter((ty) => ty !== "text.delta" && ty !== "usage")).toEqual([
      "turn.started",
      "message.user",
      "tool.started",
      "tool.finished",
      "notice",
      "context.compacted",
      "turn.finished",
    ]);
    const [, , summaryRequest, resumed] = sent();
    expect(summaryRequest).toContain('echo: {\\"text\\":\\"big\\"}');
    expect(summaryRequest).toContain("echo big");
    expect(resumed).toContain("SUMMARY: echoing big for the user.");
    expect(resumed).toContain("Continue the task from where it stopped.");
    expect(resumed).not.toContain("echo big");
    expect(resumed).not.toContain("tool_use_id");
    expect(resumed).not.toContain("tool_call_id");
  });

  it("summarizes and tries again when a request does not fit, and learns the window the provider names", async () => {
    await engine.dispose();
    start(100_000);
    const { sessionId, userId } = await seedSession(t.current.db);
    const overflow =
      kind === "anthropic"
        ? "prompt is too long: 2100 tokens > 2000 maximum"
        : "This model's maximum context length is 2000 tokens. However, your messages resulted in 2100 tokens.";
    const longResult = "x".repeat(6_000);
    fake.enqueue(
      {
        blocks: [{ type: "tool_call", name: "echo", arguments: JSON.stringify({ text: longResult }) }],
        usage: { input: 1_000, output: 5 },
      },
      { blocks: [{ type: "text", text: "Echoed a lot." }], usage: { input: 1_500, output: 5 } },
      { kind: "http_error", status: 400, type: "invalid_request_error", message: overflow },
      { blocks: [{ type: "text", text: "SUMMARY: a long echo." }] },
      { blocks: [{ type: "text", text: "Next." }], usage: { input: 200, output: 5 } },
    );
    await turn(sessionId, userId, "echo a lot");
    const events = await turn(sessionId, userId, "next");
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "completed" });
    expect(of(events, "error")).toEqual([]);
    expect(of(events, "notice")[0].text).toContain("did not fit");
    expect(of(events, "usage").at(-1)?.context).toEqual({ tokens: 205, window: 2_000 });
    // The summary request had the long tool result cut down.
    const summaryRequest = sent()[3];
    expect(summaryRequest).toContain("characters left out");
    expect(summaryRequest.length).toBeLessThan(longResult.length);
    expect(sent()[4]).toContain("SUMMARY: a long echo.");
  });

  it("goes on without a summary when the summary request fails, and says so", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    fake.enqueue(
      { blocks: [{ type: "text", text: "One." }], usage: nearlyFull },
      { kind: "http_error", status: 500 },
      { kind: "http_error", status: 500 },
      { kind: "http_error", status: 500 },
      { blocks: [{ type: "text", text: "Two." }] },
    );
    await turn(sessionId, userId, "one");
    const events = await turn(sessionId, userId, "two");
    expect(of(events, "notice").map((n) => n.code)).toEqual([
      "context_compacting",
      "provider_retry",
      "provider_retry",
      "context_compact_failed",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "completed" });
    expect(sent().at(-1)).toContain("One.");
  });

  it("summarizes at once, with no reply, when the person sends /compact, their words going with the request", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    fake.enqueue(
      { blocks: [{ type: "text", text: "Refactored the parser." }], usage: { input: 500, output: 50 } },
      {
        blocks: [{ type: "text", text: "SUMMARY: parser refactored; tests next." }],
        usage: { input: 600, output: 30 },
      },
      { blocks: [{ type: "text", text: "Writing tests." }] },
    );
    await turn(sessionId, userId, "refactor the parser");
    const events = await turn(sessionId, userId, "/compact keep the test plan");
    expect(of(events, "notice").map((n) => n.code)).toEqual(["context_compacting"]);
    expect(of(events, "context.compacted")).toMatchObject([
      { summary: "SUMMARY: parser refactored; tests next.", messages: 3 },
    ]);
    expect(of(events, "text.delta")).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "completed", stopReason: "compacted" });
    expect(of(events, "usage").at(-1)?.usage.outputTokens).toBe(30);
    expect(sent()[1]).toContain("keep the test plan");
    expect(sent()[1]).toContain(SUMMARY_REQUEST.slice(0, 40));

    await turn(sessionId, userId, "now the tests");
    const next = sent()[2];
    expect(next).toContain("SUMMARY: parser refactored; tests next.");
    expect(next).not.toContain("/compact");
    expect(next).not.toContain("Refactored the parser.");
  });

  it("says there is nothing to summarize on /compact in a new session, and asks the model nothing", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    const events = await turn(sessionId, userId, "/compact");
    expect(of(events, "notice").map((n) => n.code)).toEqual(["context_compact_skipped"]);
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "completed", stopReason: "compacted" });
    expect(fake.requests).toHaveLength(0);
  });
});
