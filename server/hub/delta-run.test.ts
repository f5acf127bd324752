// A turn's posted deltas wait for their write as runs (delta-run.ts), on real SQLite and
// PostgreSQL: a subscriber resuming from any seq inside a run, before or after its write, gets
// exactly the events that went out live (text, seq, time), the rows are one per delta as
// before, and a run the database refuses reports each of its deltas.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/hub";
import type { SessionEvent, SessionEventBody } from "../protocol/events";
import { createEventHub } from "./events";
import { eventStoreFor } from "./event-store";
import { expandRun, RunBuilder, type RunnableDelta } from "./delta-run";

async function take(gen: AsyncIterable<SessionEvent>, n: number): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  for await (const ev of gen) {
    out.push(ev);
    if (out.length === n) break;
  }
  return out;
}

const text = (i: number) => ({ type: "text.delta" as const, turnId: "t1", text: `tok${i} ` });
const reasoning = (i: number) => ({ type: "reasoning.delta" as const, turnId: "t1", text: `why${i}` });
const notice = { type: "notice" as const, level: "info" as const, code: "n", text: "between" };

describe("a run of deltas", () => {
  it("gives back each delta as it was added: text, seq and time, across milliseconds and long pieces", () => {
    const long = "é".repeat(70_000);
    const pieces = ["a", "", "😀", long, "b", ..."xyz"];
    const events = pieces.map((t, i): RunnableDelta => ({
      type: "text.delta",
      turnId: "t",
      text: t,
      seq: 41 + i,
      sessionId: "s",
      at: new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 3) * 7).toISOString(),
    }));
    const run = new RunBuilder(events[0]);
    for (const ev of events.slice(1)) {
      expect(run.continuedBy(ev)).toBe(true);
      run.add(ev);
    }
    expect(run.continuedBy({ ...events[1], seq: 50 })).toBe(false);
    expect(run.continuedBy({ ...events[1], seq: 49, turnId: "other" })).toBe(false);
    expect(run.continuedBy({ ...events[1], seq: 49, type: "reasoning.delta" })).toBe(false);
    expect(expandRun(run.snapshot())).toEqual(events);
    // A snapshot is a copy: the run grows on after it, and the next one has the new delta too.
    const first = run.snapshot();
    run.add({ ...events[1], seq: 49, text: "more" });
    expect(expandRun(first)).toEqual(events);
    expect(expandRun(run.snapshot()).at(-1)).toMatchObject({ seq: 49, text: "more" });
  });

  it("starts only from a time it can give back exactly", () => {
    const ev: RunnableDelta = { type: "text.delta", turnId: "t", text: "a", seq: 1, sessionId: "s", at: "" };
    expect(RunBuilder.fits({ ...ev, at: "2026-01-01T00:00:00.123Z" })).toBe(true);
    expect(RunBuilder.fits({ ...ev, at: "2026-01-01T00:00:00Z" })).toBe(false);
    expect(RunBuilder.fits({ ...ev, at: "not a time" })).toBe(false);
  });
});

describe.each(testDatabases())("runs of posted deltas on %s", (provider) => {
  const t = useTestDb(provider);

  it("replays from any seq inside a run, before and after its write, exactly as it went out live", async () => {
    const real = eventStoreFor(t.current.url);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const inserts: number[] = [];
    const store = {
      ...real,
      insert: async (items: Parameters<typeof real.insert>[0]) => {
        inserts.push(items.length);
        await held;
        return real.insert(items);
      },
    };
    const hub = createEventHub(t.current.db, { url: t.current.url, store });
    const { sessionId } = await seedSession(t.current.db);
    const bodies: SessionEventBody[] = [
      ...Array.from({ length: 300 }, (_, i) => text(i)),
      ...Array.from({ length: 40 }, (_, i) => reasoning(i)),
      notice,
      ...Array.from({ length: 300 }, (_, i) => text(300 + i)),
    ];
    const total = bodies.length;
    const live = take(hub.subscribe(sessionId, 0), total);
    const refused: unknown[] = [];
    // One callback for the turn, as the engine's: deltas join a run only while they share it.
    const unrecorded = (err: unknown) => refused.push(err);
    for (const [i, body] of bodies.entries()) {
      if (body.type === "notice") void hub.publish(sessionId, body);
      else hub.post(sessionId, body, unrecorded);
      // Across event-loop turns and milliseconds, as a stream comes.
      if (i % 50 === 49) await new Promise((r) => setTimeout(r, 2));
    }
    const shown = await live;
    expect(shown.map((e) => e.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    // Nothing is written yet: resuming mid-run reads the unwritten runs.
    for (const after of [0, 1, 150, 299, 300, 320, 340, 341, 500, total - 1]) {
      expect(await hub.holds(sessionId, after || 1)).toBe(true);
      const ctl = new AbortController();
      expect(await take(hub.subscribe(sessionId, after, ctl.signal), total - after)).toEqual(shown.slice(after));
      ctl.abort();
    }
    release();
    await hub.written(sessionId);
    expect(refused).toEqual([]);
    // Fewer writes' items than events: runs crossed to the writer thread, not a message per token.
    expect(inserts.reduce((a, b) => a + b, 0)).toBeLessThan(total / 10);
    const rows = await t.current.db.sessionEvent.findMany({ where: { sessionId }, orderBy: { seq: "asc" } });
    expect(rows.map((r) => r.seq)).toEqual(shown.map((e) => e.seq));
    expect(rows.map((r) => r.createdAt.toISOString())).toEqual(shown.map((e) => e.at));
    expect(rows.map((r) => ({ type: r.type, ...(r.payload as object) }))).toEqual(
      shown.map(({ seq: _s, sessionId: _i, at: _a, ...body }) => body),
    );
    for (const after of [0, 150, 341, total - 1]) {
      const ctl = new AbortController();
      expect(await take(hub.subscribe(sessionId, after, ctl.signal), total - after)).toEqual(shown.slice(after));
      ctl.abort();
    }
    await hub.dispose();
  });

  it("reports every delta of a run the database refuses", async () => {
    // b's rows are refused by a constraint while b exists (a deleted session's are dropped
    // deliberately instead, events.test.ts): every delta of its run is reported.
    const real = eventStoreFor(t.current.url);
    let refuse = "";
    const store = {
      ...real,
      insert: async (rows: Parameters<typeof real.insert>[0]) => {
        if (rows.some((r) => r.sessionId === refuse)) throw new Error("UNIQUE constraint failed: refused here");
        return real.insert(rows);
      },
    };
    const logged: string[] = [];
    const hub = createEventHub(t.current.db, {
      url: t.current.url,
      store,
      writeDelayMs: 50,
      log: (m) => logged.push(m),
    });
    const [a, b] = [await seedSession(t.current.db), await seedSession(t.current.db)];
    await hub.publish(b.sessionId, notice);
    refuse = b.sessionId;
    const refused: number[] = [];
    const lost = (_err: unknown, ev?: SessionEvent) => refused.push(ev!.seq);
    const kept = () => refused.push(-1);
    for (let i = 0; i < 30; i++) hub.post(b.sessionId, text(i), lost);
    for (let i = 0; i < 30; i++) hub.post(a.sessionId, text(i), kept);
    await Promise.all([hub.written(a.sessionId), hub.written(b.sessionId)]);
    expect(refused).toEqual(Array.from({ length: 30 }, (_, i) => i + 2));
    // A refusal of a session that exists is a fault, said once.
    expect(logged.filter((m) => /could not be written/.test(m))).toHaveLength(1);
    expect(await t.current.db.sessionEvent.count({ where: { sessionId: a.sessionId } })).toBe(30);
    await hub.dispose();
  });
});
