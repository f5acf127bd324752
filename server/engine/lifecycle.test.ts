// How turns end other than normally: cancel mid-stream and mid-tool, a second message while
// busy, no provider configured, shutdown, a turn a peer instance took over, and a server killed mid-turn (a real child process
// killed with SIGKILL) whose turn the next start marks interrupted, keeping what streamed.
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestDb } from "../testing/db";
import { createEventHub, type EventHub } from "../hub/events";
import { seedSession } from "../testing/hub";
import type { FakeProvider } from "./fake-provider/server";
import {
  eventsUntilFinished,
  fakeProviderEnv,
  fastRetries,
  testDispatcher,
  useFakeProvider,
  waitForEvent,
} from "../testing/engine";
import { createEngine, type Engine } from "./engine";
import type { ContentBlock } from "./types";
import type { SessionEvent } from "../protocol/events";
import { engineCombos, engineDeps } from "../testing/engine-suite";

const combos = engineCombos();
const textOf = (blocks: ContentBlock[]) => blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");

describe.each(combos)("turn lifecycle on %s with the %s wire format", (dbProvider, kind) => {
  const t = useTestDb(dbProvider);
  const provider = useFakeProvider();
  let fake: FakeProvider;
  let hub: EventHub;
  let engine: Engine;
  const baseURL = () => (kind === "anthropic" ? fake.anthropicBaseURL : fake.openaiBaseURL);
  const env = () => fakeProviderEnv(kind, fake);

  beforeEach(() => {
    fake = provider.current;
    hub = createEventHub(t.current.db, { url: t.current.url });
    engine = createEngine(engineDeps(t.current, hub, kind, fake));
  });
  afterEach(async () => {
    await engine.dispose();
    await hub.dispose();
  });

  it("cancel aborts a streaming reply at once and keeps what streamed", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    fake.enqueue({
      blocks: [{ type: "text", text: "Streaming slowly, then a long silence follows" }],
      deltaChars: 4,
      hangAfterBytes: 900,
    });
    const { turnId } = await engine.sendMessage(sessionId, { userId }, "go");
    await waitForEvent(hub, sessionId, (e) => e.type === "text.delta");
    await expect(engine.sendMessage(sessionId, { userId }, "again")).rejects.toThrow(/already running/);
    expect(await engine.cancel(sessionId)).toBe(true);
    expect(engine.isRunning(sessionId)).toBe(false);
    const events = await eventsUntilFinished(hub, sessionId, turnId);
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "cancelled", stopReason: "cancelled" });
    const streamed = events.flatMap((e) => (e.type === "text.delta" ? [e.text] : [])).join("");
    const stored = await t.current.db.message.findFirstOrThrow({ where: { turnId, role: "assistant" } });
    expect(streamed.length).toBeGreaterThan(0);
    expect(textOf(stored.content as unknown as ContentBlock[])).toBe(streamed);
    expect((await t.current.db.turn.findUniqueOrThrow({ where: { id: turnId } })).status).toBe("cancelled");
    expect(await engine.cancel(sessionId)).toBe(false);
  });

  it("cancel during a tool call answers it as cancelled and the next turn continues from a valid history", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    fake.enqueue(
      { blocks: [{ type: "tool_call", id: "call_w", name: "wait", arguments: "{}" }] },
      { blocks: [{ type: "text", text: "resumed" }] },
    );
    const first = await engine.sendMessage(sessionId, { userId }, "wait");
    await waitForEvent(hub, sessionId, (e) => e.type === "tool.started");
    await engine.cancel(sessionId);
    const ev = await eventsUntilFinished(hub, sessionId, first.turnId);
    expect(ev.at(-1)).toMatchObject({ status: "cancelled" });
    const second = await engine.sendMessage(sessionId, { userId }, "go on");
    const ev2 = await eventsUntilFinished(hub, sessionId, second.turnId);
    expect(ev2.at(-1)).toMatchObject({ status: "completed" });
    const sent = JSON.stringify(fake.requests[1].body);
    expect(sent).toContain("call_w");
    expect(sent).toContain("cancelled");
    expect(sent).toContain("go on");
  });

  it("answers a session with no provider configured with an error saying how to configure one", async () => {
    await engine.dispose();
    engine = createEngine({ db: t.current.db, rows: t.current.rows, hub, dispatcher: testDispatcher(), env: {} });
    const { sessionId, userId } = await seedSession(t.current.db);
    const { turnId } = await engine.sendMessage(sessionId, { userId }, "hello?");
    const events = await eventsUntilFinished(hub, sessionId, turnId);
    const error = events.find((e) => e.type === "error");
    expect(error).toMatchObject({ code: "provider_not_configured" });
    expect((error as { message: string }).message).toMatch(/ANTHROPIC_API_KEY.*OPENAI_API_KEY.*OPENAI_BASE_URL/s);
    expect(events.at(-1)).toMatchObject({ status: "failed", stopReason: "provider_not_configured" });
    expect(await t.current.db.message.count({ where: { sessionId, role: "user" } })).toBe(1);
  });

  it("records a turn cut by shutdown as interrupted", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    fake.enqueue({ blocks: [{ type: "text", text: "about to be shut down" }], deltaChars: 4, hangAfterBytes: 700 });
    const { turnId } = await engine.sendMessage(sessionId, { userId }, "go");
    await waitForEvent(hub, sessionId, (e) => e.type === "text.delta");
    await engine.dispose();
    await expect(engine.sendMessage(sessionId, { userId }, "more")).rejects.toThrow(/shutting down/);
    expect(await t.current.db.turn.findUniqueOrThrow({ where: { id: turnId } })).toMatchObject({
      status: "interrupted",
      stopReason: "server_shutdown",
    });
  });

  // A peer that found this instance gone (stalled past its lease) claims its turn, records it
  // interrupted and publishes its end: this instance must then add nothing to it.
  const takeOver = async (sessionId: string, turnId: string) => {
    await t.current.db.turn.update({
      where: { id: turnId },
      data: { instanceId: "peer", status: "interrupted", stopReason: "instance_gone", endedAt: new Date() },
    });
    await hub.publish(sessionId, { type: "turn.finished", turnId, status: "interrupted", stopReason: "instance_gone" });
  };
  const finishedEvents = async (sessionId: string) => {
    // Events become durable in publish order: once this one is, every earlier one is stored.
    await hub.publish(sessionId, { type: "notice", level: "info", code: "marker", text: "end of test" });
    return t.current.db.sessionEvent.findMany({ where: { sessionId, type: "turn.finished" } });
  };
  /** An engine that is instance "me" of a cluster, streaming a turn that hangs mid-reply. */
  const streamAsInstance = async (
    reply: Parameters<FakeProvider["enqueue"]>[0] = {
      blocks: [{ type: "text", text: "streaming on a stalled instance" }],
      deltaChars: 4,
      hangAfterBytes: 700,
    },
    until: SessionEvent["type"] = "text.delta",
  ) => {
    await engine.dispose();
    engine = createEngine({
      db: t.current.db,
      rows: t.current.rows,
      hub,
      dispatcher: testDispatcher(),
      env: env(),
      retry: fastRetries,
      systemPrompt: "SYSTEM",
      cluster: { instanceId: "me", cancelElsewhere: async () => false },
    });
    const { sessionId, userId } = await seedSession(t.current.db);
    fake.enqueue(reply);
    const { turnId } = await engine.sendMessage(sessionId, { userId }, "go");
    await waitForEvent(hub, sessionId, (e) => e.type === until);
    return { sessionId, userId, turnId };
  };

  it("drops what a tool call still running in a turn a peer took over reports when it settles", async () => {
    const { sessionId, turnId } = await streamAsInstance(
      { blocks: [{ type: "tool_call", id: "call_w", name: "wait", arguments: "{}" }] },
      "tool.started",
    );
    await takeOver(sessionId, turnId);
    expect(engine.abandon([turnId])).toBe(1);
    await engine.settled(sessionId);
    await hub.publish(sessionId, { type: "notice", level: "info", code: "marker", text: "end of test" });
    const types = (await t.current.db.sessionEvent.findMany({ where: { sessionId }, orderBy: { seq: "asc" } })).map(
      (e) => e.type,
    );
    // The wait tool answers "cancelled" once the abort reaches it: neither that event nor the
    // tool message reaches the log or the history.
    expect(types.slice(types.indexOf("tool.started"))).toEqual(["tool.started", "turn.finished", "notice"]);
    expect(await t.current.db.message.count({ where: { sessionId, role: "tool" } })).toBe(0);
  });

  it("stops a turn a peer took over at once, writing and publishing nothing more for it", async () => {
    const { sessionId, turnId } = await streamAsInstance();
    expect(engine.runningTurns()).toEqual([turnId]);
    await takeOver(sessionId, turnId);
    expect(engine.abandon(["another-turn"])).toBe(0);
    expect(engine.abandon([turnId])).toBe(1);
    await engine.settled(sessionId);
    expect(engine.isRunning(sessionId)).toBe(false);
    expect(engine.runningTurns()).toEqual([]);
    expect(await t.current.db.turn.findUniqueOrThrow({ where: { id: turnId } })).toMatchObject({
      instanceId: "peer",
      status: "interrupted",
      stopReason: "instance_gone",
    });
    expect((await finishedEvents(sessionId)).map((e) => (e.payload as { status: string }).status)).toEqual([
      "interrupted",
    ]);
  });

  it("ends a turn claimed by a peer before anyone noticed without overwriting the peer's record", async () => {
    const { sessionId, userId, turnId } = await streamAsInstance();
    await takeOver(sessionId, turnId);
    // This instance ends the turn its own way (here a cancel) before its heartbeat saw the claim.
    expect(await engine.cancel(sessionId)).toBe(true);
    expect(await t.current.db.turn.findUniqueOrThrow({ where: { id: turnId } })).toMatchObject({
      instanceId: "peer",
      status: "interrupted",
      stopReason: "instance_gone",
    });
    expect((await finishedEvents(sessionId)).map((e) => (e.payload as { status: string }).status)).toEqual([
      "interrupted",
    ]);
    // The session is free for the next turn.
    await t.current.db.session.update({ where: { id: sessionId }, data: { status: "idle" } });
    fake.enqueue({ blocks: [{ type: "text", text: "next" }] });
    const next = await engine.sendMessage(sessionId, { userId }, "again");
    expect((await eventsUntilFinished(hub, sessionId, next.turnId)).at(-1)).toMatchObject({ status: "completed" });
  });

  it("marks a turn of a killed server interrupted at the next start, keeping what streamed", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    fake.enqueue(
      {
        blocks: [
          { type: "text", text: "Checking. " },
          { type: "tool_call", id: "call_k", name: "echo", arguments: '{"text":"k"}' },
          { type: "text", text: "Partial answer that never finishes because the server dies" },
        ],
        deltaChars: 3,
        hangAfterBytes: kind === "anthropic" ? 3200 : 3000,
      },
      { blocks: [{ type: "text", text: "after restart" }] },
    );
    const child = spawn(
      resolve("node_modules/.bin/tsx"),
      [resolve(import.meta.dirname, "crash-child.ts"), t.current.url, sessionId, userId, kind, baseURL()],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += String(d)));
    const exited = new Promise((r) => child.on("exit", r));
    // Wait until deltas after the tool call were recorded, then kill without warning.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const n = await t.current.db.sessionEvent.count({ where: { sessionId, type: "text.delta" } });
      if (n >= 8) break;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`child never streamed: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 100));
    child.kill("SIGKILL");
    await exited;
    const turn = await t.current.db.turn.findFirstOrThrow({ where: { sessionId } });
    expect(turn.status).toBe("running");

    expect(await engine.recoverInterrupted()).toBe(1);
    const after = await t.current.db.turn.findUniqueOrThrow({ where: { id: turn.id } });
    expect(after).toMatchObject({ status: "interrupted", stopReason: "server_restart" });
    expect(after.endedAt).not.toBeNull();
    const events = await eventsUntilFinished(hub, sessionId, turn.id);
    const streamed = events.flatMap((e) => (e.type === "text.delta" ? [e.text] : [])).join("");
    expect(streamed.startsWith("Checking. Partial")).toBe(true);
    const messages = await t.current.db.message.findMany({ where: { sessionId }, orderBy: { position: "asc" } });
    expect(textOf(messages[1].content as unknown as ContentBlock[])).toBe(streamed);
    if (kind === "anthropic") {
      // The tool_use block had ended: the call is kept and answered. On the OpenAI wire a call
      // is only complete when the response finishes, so a killed stream leaves none behind.
      expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
      expect(messages[2].content).toMatchObject([{ type: "tool_result", id: "call_k", isError: true }]);
    } else {
      expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    }
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "interrupted" });
    expect(await engine.recoverInterrupted()).toBe(0);

    const next = await engine.sendMessage(sessionId, { userId }, "continue");
    const ev = await eventsUntilFinished(hub, sessionId, next.turnId);
    expect(ev.at(-1)).toMatchObject({ status: "completed" });
    expect(JSON.stringify(fake.requests.at(-1)!.body)).toContain("Partial answ");
  }, 60_000);
});
