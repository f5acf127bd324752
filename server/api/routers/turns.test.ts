// The turns router over a real WebSocket with tRPC's own client: a script can send, cancel and
// follow a session; a client that reconnects (by itself, or anew with its last seq) gets
// exactly the events it missed.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createTRPCClient, createWSClient, wsLink, type TRPCClient } from "@trpc/client";
import { applyWSSHandler } from "@trpc/server/adapters/ws";
import WebSocket, { WebSocketServer } from "ws";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../../testing/db";
import { createEventHub, type EventHub } from "../../hub/events";
import { seedSession } from "../../testing/hub";
import { createEngine, type Engine } from "../../engine/engine";
import { startFakeProvider, type FakeProvider } from "../../engine/fake-provider/server";
import { fastRetries, testDispatcher } from "../../testing/engine";
import { createSessionService } from "../../services/sessions";
import type { Actor, Services } from "../../services/types";
import type { SessionEvent } from "../../protocol/events";
import { appRouter, type AppRouter } from "../root";

describe.each(testDatabases())("turns router over WebSocket on %s", (dbProvider) => {
  const t = useTestDb(dbProvider);
  let fake: FakeProvider;
  let hub: EventHub;
  let engine: Engine;
  let http: Server;
  let wss: WebSocketServer;
  let handler: ReturnType<typeof applyWSSHandler>;
  let actor: Actor;
  let sessionId: string;
  let cancelledCards: string[] = [];
  const clients: { close(): void }[] = [];

  const connect = (): TRPCClient<AppRouter> => {
    const ws = createWSClient({
      url: `ws://127.0.0.1:${(http.address() as AddressInfo).port}`,
      WebSocket: WebSocket as never,
      retryDelayMs: () => 50,
    });
    clients.push(ws);
    return createTRPCClient<AppRouter>({ links: [wsLink({ client: ws })] });
  };

  /** Subscribes and collects until `stop` says so; resolves with what arrived. */
  const follow = (
    client: TRPCClient<AppRouter>,
    input: { sessionId: string; lastSeq?: number },
    stop: (ev: SessionEvent, all: SessionEvent[]) => boolean,
  ) =>
    new Promise<{ events: SessionEvent[]; ids: string[] }>((resolve, reject) => {
      const events: SessionEvent[] = [];
      const ids: string[] = [];
      const sub = client.turns.events.subscribe(input, {
        onData: (d) => {
          ids.push(d.id);
          events.push(d.data as SessionEvent);
          if (stop(d.data as SessionEvent, events)) {
            sub.unsubscribe();
            resolve({ events, ids });
          }
        },
        onError: reject,
      });
    });

  beforeAll(async () => {
    fake = await startFakeProvider();
    http = createServer();
    wss = new WebSocketServer({ server: http });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  });
  afterAll(async () => {
    wss.close();
    await new Promise((r) => http.close(r));
    await fake.close();
  });
  beforeEach(async () => {
    const db = t.current.db;
    const seeded = await seedSession(db);
    sessionId = seeded.sessionId;
    actor = { userId: seeded.userId, orgId: seeded.orgId, role: "owner" };
    hub = createEventHub(db, { url: t.current.url });
    engine = createEngine({
      db,
      rows: t.current.rows,
      hub,
      dispatcher: testDispatcher(),
      retry: fastRetries,
      systemPrompt: "SYSTEM",
      env: { QUIVER_PROVIDER: "openai", OPENAI_API_KEY: "k", OPENAI_BASE_URL: fake.openaiBaseURL },
    });
    // Records which sessions had their leftover approval cards cancelled (the pipeline's job).
    cancelledCards = [];
    const approvals = { cancelSession: async (id: string) => void cancelledCards.push(id) };
    const sessions = createSessionService(db, { modelChoices: () => engine.modelChoices() });
    const services = { db, dbProvider, sessions, engine, hub, approvals } as unknown as Services;
    handler = applyWSSHandler({ wss, router: appRouter, createContext: () => ({ services, actor }) });
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    handler.broadcastReconnectNotification();
    wss.removeAllListeners("connection");
    await engine.dispose();
    await hub.dispose();
  });

  const slowReply = () =>
    fake.enqueue({ blocks: [{ type: "text", text: "0123456789".repeat(6) }], deltaChars: 2, delayMs: 10 });
  const isEnd = (ev: SessionEvent) => ev.type === "turn.finished";

  it("drives a session: send, follow to the end, and reconnect anew from a last seq", async () => {
    slowReply();
    const a = connect();
    const firstPart = follow(a, { sessionId }, (_ev, all) => all.length === 8);
    const { turnId } = await a.turns.send.mutate({ sessionId, text: "count" });
    const { events: before, ids } = await firstPart;
    expect(ids).toEqual(before.map((e) => String(e.seq)));
    clients[0].close();

    const b = connect();
    const { events: after } = await follow(b, { sessionId, lastSeq: before.at(-1)!.seq }, isEnd);
    const seqs = [...before, ...after].map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(after.at(-1)).toMatchObject({ type: "turn.finished", turnId, status: "completed" });
    const text = [...before, ...after].flatMap((e) => (e.type === "text.delta" ? [e.text] : [])).join("");
    expect(text).toBe("0123456789".repeat(6));

    // A fresh client with no seq gets the whole session from the database.
    const { events: all } = await follow(connect(), { sessionId }, isEnd);
    expect(all).toEqual([...before, ...after]);
  });

  it("a session's choice of model reaches the provider from its next turn; an unconfigured provider is refused", async () => {
    const c = connect();
    expect(await c.sessions.models.query()).toMatchObject({
      providers: [
        { kind: "anthropic", configured: false, needs: "ANTHROPIC_API_KEY" },
        { kind: "openai", configured: true, defaultModel: "gpt-4.1" },
      ],
      fallback: { provider: "openai", model: "gpt-4.1" },
    });
    const turn = async () => {
      fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
      const before = fake.requests.length;
      const done = follow(
        c,
        { sessionId, lastSeq: await engine.settled(sessionId).then(() => hub.lastSeq(sessionId)) },
        isEnd,
      );
      await c.turns.send.mutate({ sessionId, text: "hi" });
      await done;
      return (fake.requests[before].body as { model: string }).model;
    };
    expect(await turn()).toBe("gpt-4.1");
    expect(
      await c.sessions.setModel.mutate({ id: sessionId, provider: "openai", model: " qwen2.5-coder " }),
    ).toMatchObject({ provider: "openai", model: "qwen2.5-coder" });
    expect(await turn()).toBe("qwen2.5-coder");
    await expect(c.sessions.setModel.mutate({ id: sessionId, provider: "anthropic", model: null })).rejects.toThrow(
      /Anthropic is not configured on this server: set ANTHROPIC_API_KEY/,
    );
    await expect(c.sessions.setModel.mutate({ id: "nope", provider: null, model: null })).rejects.toThrow(
      /No session nope/,
    );
    // Back to the server's default.
    expect(await c.sessions.setModel.mutate({ id: sessionId, provider: null, model: null })).toMatchObject({
      provider: null,
      model: null,
    });
    expect(await turn()).toBe("gpt-4.1");
  });

  it("resumes by itself after the connection drops, with no gap and no duplicate", async () => {
    slowReply();
    const c = connect();
    let dropped = false;
    const done = follow(c, { sessionId }, (ev, all) => {
      if (all.length === 6 && !dropped) {
        dropped = true;
        for (const socket of wss.clients) socket.terminate();
      }
      return isEnd(ev);
    });
    await c.turns.send.mutate({ sessionId, text: "count" });
    const { events } = await done;
    expect(dropped).toBe(true);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.flatMap((e) => (e.type === "text.delta" ? [e.text] : [])).join("")).toBe("0123456789".repeat(6));
  });

  // tRPC's socket adapter is patched (server/patches): its subscription loop must still end a
  // source that has nothing to send, and ignores its signal, when the client unsubscribes.
  it("ends the subscription's source when the client unsubscribes while it waits", async () => {
    let returned = 0;
    hub.subscribe = () => ({
      [Symbol.asyncIterator]() {
        return this;
      },
      next: () => new Promise<never>(() => undefined),
      return: async () => {
        returned++;
        return { done: true, value: undefined };
      },
    });
    const c = connect();
    let sub!: { unsubscribe(): void };
    await new Promise<void>(
      (resolve) =>
        (sub = c.turns.events.subscribe({ sessionId }, { onStarted: () => resolve(), onData: () => undefined })),
    );
    expect(returned).toBe(0);
    sub.unsubscribe();
    await expect.poll(() => returned, { timeout: 5_000 }).toBeGreaterThan(0);
  });

  it("answers bad sends clearly and cancels a running turn", async () => {
    const c = connect();
    await expect(c.turns.send.mutate({ sessionId, text: "   " })).rejects.toThrow(/empty/);
    await expect(c.turns.send.mutate({ sessionId: "nope", text: "hi" })).rejects.toThrow(/No session nope/);
    fake.enqueue({ blocks: [{ type: "text", text: "never ending" }], deltaChars: 2, hangAfterBytes: 400 });
    const finished = follow(c, { sessionId }, isEnd);
    await c.turns.send.mutate({ sessionId, text: "go" });
    await expect(c.turns.send.mutate({ sessionId, text: "again" })).rejects.toThrow(/already running/);
    expect(await c.turns.cancel.mutate({ sessionId })).toEqual({ cancelled: true });
    const { events } = await finished;
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "cancelled" });
    expect(await c.turns.cancel.mutate({ sessionId })).toEqual({ cancelled: false });
    expect(cancelledCards).toEqual([sessionId, sessionId]);
  });

  it("gives another org's member no way in: not found, idle or busy, and no turn started", async () => {
    // The socket's context is made when it connects: one socket per person.
    const owner = connect();
    await owner.turns.cancel.mutate({ sessionId });
    const ownerActor = actor;
    const other = await seedSession(t.current.db);
    actor = { userId: other.userId, orgId: other.orgId, role: "owner" };
    const stranger = connect();
    await expect(stranger.turns.send.mutate({ sessionId, text: "hi" })).rejects.toThrow(`No session ${sessionId}.`);
    actor = ownerActor;
    expect(await t.current.db.turn.count({ where: { sessionId } })).toBe(0);

    fake.enqueue({ blocks: [{ type: "text", text: "long" }], deltaChars: 1, hangAfterBytes: 200 });
    await owner.turns.send.mutate({ sessionId, text: "go" });
    // Busy is news about the session: a stranger is told it does not exist instead.
    await expect(stranger.turns.send.mutate({ sessionId, text: "hi" })).rejects.toThrow(`No session ${sessionId}.`);
    await expect(owner.turns.send.mutate({ sessionId, text: "hi" })).rejects.toThrow(/already running/);
    expect(await owner.turns.cancel.mutate({ sessionId })).toEqual({ cancelled: true });
  });
});
