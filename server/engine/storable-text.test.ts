// A NUL or an unpaired surrogate in what a person sends or a model streams, end to end on real
// SQLite and PostgreSQL: the turn completes, every event is stored, and the reply is kept. On
// PostgreSQL, whose text and jsonb cannot hold them, they are stored as ␀ and U+FFFD
// (db/storable.ts); before, one such character failed the turn there and dropped its events.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { createEventHub, type EventHub } from "../hub/events";
import { seedSession } from "../testing/hub";
import type { FakeProvider } from "./fake-provider/server";
import { eventsUntilFinished, fakeProviderEnv, fastRetries, testDispatcher, useFakeProvider } from "../testing/engine";
import { createEngine, type Engine } from "./engine";
import type { ProviderKind } from "./types";

const combos = testDatabases().flatMap((db) =>
  (["anthropic", "openai"] as ProviderKind[]).map((p) => [db, p] as const),
);

describe.each(combos)("hostile characters on %s with the %s wire format", (dbProvider, kind) => {
  const t = useTestDb(dbProvider);
  const provider = useFakeProvider();
  let fake: FakeProvider;
  let hub: EventHub;
  let engine: Engine;
  beforeEach(() => {
    fake = provider.current;
    hub = createEventHub(t.current.db, { url: t.current.url });
    engine = createEngine({
      db: t.current.db,
      rows: t.current.rows,
      hub,
      dispatcher: testDispatcher(),
      env: fakeProviderEnv(kind, fake),
      catalog: { catalog: () => [] },
      retry: fastRetries,
      systemPrompt: "SYSTEM",
    });
  });
  afterEach(async () => {
    await engine.dispose();
    await hub.dispose();
  });

  it("stores a message and a reply holding NUL and unpaired surrogates, and every event of the turn", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    const reply = "before\u0000after \ud800 lone high, \udc00 lone low, 😀 paired";
    fake.enqueue({
      blocks: [{ type: "text", text: reply }],
      usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
    });
    const { turnId } = await engine.sendMessage(sessionId, { userId }, "print a NUL: \u0000");
    const events = await eventsUntilFinished(hub, sessionId, turnId);
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "completed" });
    // Live, the text is what the model sent.
    const live = events.flatMap((e) => (e.type === "text.delta" ? [e.text] : [])).join("");
    expect(live).toBe(reply);
    await hub.written(sessionId);

    const kept = (s: string) =>
      dbProvider === "postgresql"
        ? s.replace("\u0000", "\u2400").replace("\ud800", "\ufffd").replace("\udc00", "\ufffd")
        : s;
    const stored = await t.current.db.sessionEvent.findMany({ where: { sessionId }, orderBy: { seq: "asc" } });
    expect(stored.map((r) => r.seq)).toEqual(events.map((e) => e.seq));
    const storedText = stored
      .flatMap((r) => (r.type === "text.delta" ? [(r.payload as { text: string }).text] : []))
      .join("");
    expect(storedText).toBe(kept(reply));
    const messages = await t.current.db.message.findMany({ where: { sessionId }, orderBy: { position: "asc" } });
    expect(messages.map((m) => m.content)).toEqual([
      [{ type: "text", text: kept("print a NUL: \u0000") }],
      [{ type: "text", text: kept(reply) }],
    ]);
    const turn = await t.current.db.turn.findUnique({ where: { id: turnId } });
    expect(turn).toMatchObject({ status: "completed", error: null });
  });
});
