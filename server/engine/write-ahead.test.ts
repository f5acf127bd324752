// A response is read no further ahead of the database than WRITE_AHEAD allows (response.ts):
// with the event writes held, a provider that has sent a long answer gets it read about two
// stretches of deltas deep and no deeper, the rest waiting in its socket, since every delta
// fanned out is held in memory until its write. Once the writes go through, the whole answer
// streams, is stored delta by delta and ends up in the assistant message.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTestDb } from "../testing/db";
import { createEventHub, type EventHub } from "../hub/events";
import { eventStoreFor } from "../hub/event-store";
import type { DeltaRun } from "../hub/delta-run";
import type { SessionEvent } from "../protocol/events";
import { seedSession } from "../testing/hub";
import { eventsUntilFinished, useFakeProvider } from "../testing/engine";
import { createEngine, type Engine } from "./engine";
import { WRITE_AHEAD } from "./response";
import { engineCombos, engineDeps } from "../testing/engine-suite";

const combos = engineCombos();
const DELTAS = 10 * WRITE_AHEAD;

describe.each(combos)("reading a response ahead of its writes on %s with the %s wire format", (dbProvider, kind) => {
  const t = useTestDb(dbProvider);
  const provider = useFakeProvider();
  let hub: EventHub;
  let engine: Engine;
  let release: () => void;

  beforeEach(() => {
    // Writes that carry a text delta wait until the test lets them through.
    const real = eventStoreFor(t.current.url);
    const held = new Promise<void>((r) => (release = r));
    const carriesText = (rows: ReadonlyArray<SessionEvent | DeltaRun>) =>
      rows.some((r) => ("kind" in r && r.kind === "delta-run") || r.type === "text.delta");
    const store = {
      ...real,
      insert: async (rows: ReadonlyArray<SessionEvent | DeltaRun>) => {
        if (carriesText(rows)) await held;
        return real.insert(rows);
      },
    };
    hub = createEventHub(t.current.db, { url: t.current.url, store });
    engine = createEngine(engineDeps(t.current, hub, kind, provider.current));
  });
  afterEach(async () => {
    release();
    await engine.dispose();
    await hub.dispose();
  });

  it("stops reading the stream about two stretches past what is stored, and streams the rest once it is", async () => {
    const { sessionId, userId } = await seedSession(t.current.db);
    const text = Array.from({ length: DELTAS }, (_, i) => `w${String(i).padStart(5, "0")} `).join("");
    provider.current.enqueue({ blocks: [{ type: "text", text }], deltaChars: 7 });
    const { turnId } = await engine.sendMessage(sessionId, { userId }, "go");
    // Deltas fanned out live while nothing of them can be written.
    const ctl = new AbortController();
    let live = 0;
    const counting = (async () => {
      for await (const ev of hub.subscribe(sessionId, 0, ctl.signal)) if (ev.type === "text.delta") live++;
    })();
    let last = -1;
    for (let i = 0; i < 100 && (live === 0 || live !== last); i++) {
      last = live;
      await new Promise((r) => setTimeout(r, 200));
    }
    ctl.abort();
    await counting;
    expect(live).toBeGreaterThan(WRITE_AHEAD);
    expect(live).toBeLessThanOrEqual(2 * WRITE_AHEAD);

    release();
    const events = await eventsUntilFinished(hub, sessionId, turnId);
    const streamed = events.flatMap((e) => (e.type === "text.delta" ? [e.text] : []));
    expect(streamed.length).toBe(DELTAS);
    expect(streamed.join("")).toBe(text);
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "completed" });
    const message = await t.current.db.message.findFirstOrThrow({ where: { turnId, role: "assistant" } });
    expect(JSON.stringify(message.content)).toContain(text.slice(-64));
  });
});
