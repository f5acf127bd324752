// A turn whose session's owner stops being a member of its org, with no stop reaching the turn
// (as when the server that removed them was killed right after the commit): the turn ends before
// its next model request, says why, and nothing more runs for it. Real databases and the fake
// provider on both wire formats.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestDb } from "../testing/db";
import { createEventHub, type EventHub } from "../hub/events";
import { seedSession } from "../testing/hub";
import { eventsUntilFinished, testDispatcher, useFakeProvider } from "../testing/engine";
import { engineCombos, engineDeps } from "../testing/engine-suite";
import { createEngine, type Engine } from "./engine";
import type { Dispatcher } from "../pipeline/contract";

describe.each(engineCombos())("a removed owner's turn on %s with the %s wire format", (dbProvider, kind) => {
  const t = useTestDb(dbProvider);
  const provider = useFakeProvider();
  let hub: EventHub;
  let engine: Engine | undefined;
  beforeEach(() => (hub = createEventHub(t.current.db, { url: t.current.url })));
  afterEach(async () => {
    await engine?.dispose();
    await hub.dispose();
  });

  // As the server runs it (the database's provider known: one plain SQL read), and without it.
  const reads = [
    ["plain SQL", { dbProvider }],
    ["Prisma", {}],
  ] as const;

  it.each(reads)("stops before the next model request once the owner is no longer a member (%s)", async (_, read) => {
    const fake = provider.current;
    const { sessionId, userId, orgId } = await seedSession(t.current.db);
    const inner = testDispatcher();
    // The membership ends while the step's tool call runs; nobody cancels the turn.
    const dispatcher: Dispatcher = {
      ...inner,
      dispatch: async (req) => {
        await t.current.db.membership.delete({ where: { userId_orgId: { userId, orgId } } });
        return inner.dispatch(req);
      },
    };
    engine = createEngine(engineDeps(t.current, hub, kind, fake, { dispatcher, ...read }));
    // One step scripted: a second request would find none and fail the turn another way.
    fake.enqueue({ blocks: [{ type: "tool_call", id: "call_1", name: "echo", arguments: '{"n":1}' }] });
    const before = fake.requests.length;
    const { turnId } = await engine.sendMessage(sessionId, { userId }, "go");
    const events = await eventsUntilFinished(hub, sessionId, turnId);
    expect(events.find((e) => e.type === "notice" && e.code === "owner_removed")).toMatchObject({
      text: "The turn stopped: the session's owner is no longer a member of this org.",
    });
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "cancelled", stopReason: "owner_removed" });
    expect(fake.requests.length - before).toBe(1);
    expect(inner.requests.map((r) => r.calls.map((c) => c.providerCallId))).toEqual([["call_1"]]);
    expect((await t.current.db.turn.findUniqueOrThrow({ where: { id: turnId } })).status).toBe("cancelled");
  });

  it.each(reads)("a member's turn goes on through every step (%s)", async (_, read) => {
    const fake = provider.current;
    const { sessionId, userId } = await seedSession(t.current.db);
    engine = createEngine(engineDeps(t.current, hub, kind, fake, read));
    fake.enqueue(
      { blocks: [{ type: "tool_call", id: "call_1", name: "echo", arguments: "{}" }] },
      { blocks: [{ type: "text", text: "done" }] },
    );
    const { turnId } = await engine.sendMessage(sessionId, { userId }, "go");
    const events = await eventsUntilFinished(hub, sessionId, turnId);
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "completed" });
  });
});
