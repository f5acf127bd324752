// The event hub on real SQLite and PostgreSQL: sequence numbers are unique and contiguous even
// with two writers, and a subscriber resuming from any seq sees every later event exactly once.
import { describe, expect, it } from "vitest";
import { openDb } from "../db";
import { testDatabases, useTestDb } from "../testing/db";
import type { SessionEvent } from "../protocol/events";
import { createEventHub } from "./events";
import { eventStoreFor } from "./event-store";
import { seedSession } from "../testing/hub";

const notice = (i: number) => ({ type: "notice" as const, level: "info" as const, code: "n", text: String(i) });

async function take(gen: AsyncIterable<SessionEvent>, n: number): Promise<SessionEvent[]> {
  const out: SessionEvent[] = [];
  for await (const ev of gen) {
    out.push(ev);
    if (out.length === n) break;
  }
  return out;
}

describe.each(testDatabases())("event hub on %s", (provider) => {
  const t = useTestDb(provider);

  it("persists events with contiguous per-session sequence numbers", async () => {
    const hub = createEventHub(t.current.db, { url: t.current.url });
    const { sessionId } = await seedSession(t.current.db);
    const published = await Promise.all(Array.from({ length: 20 }, (_, i) => hub.publish(sessionId, notice(i))));
    expect(published.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(published.map((e) => (e as { text: string }).text)).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
    const rows = await t.current.db.sessionEvent.findMany({ where: { sessionId }, orderBy: { seq: "asc" } });
    expect(rows.map((r) => r.seq)).toEqual(published.map((e) => e.seq));
    expect(rows[3].payload).toEqual(notice(3));
    // Written by the driver, read by Prisma: the same instant the live event carried.
    expect(rows.map((r) => r.createdAt.toISOString())).toEqual(published.map((e) => e.at));
    expect(await hub.lastSeq(sessionId)).toBe(20);
    const active = (await t.current.db.session.findUniqueOrThrow({ where: { id: sessionId } })).updatedAt;
    await new Promise((r) => setTimeout(r, 5));
    await hub.dispose();
    // Unused reserved numbers are given back: the next process continues at 21. Giving them back
    // is not activity: the session's last-active time stays.
    const after = await t.current.db.session.findUniqueOrThrow({ where: { id: sessionId } });
    expect(after.lastSeq).toBe(20);
    expect(after.updatedAt).toEqual(active);
    const next = createEventHub(t.current.db, { url: t.current.url });
    expect((await next.publish(sessionId, notice(21))).seq).toBe(21);
    await next.dispose();
  });

  it("leases numbers on the session row, here and through the query thread, and refuses a session that is not there", async () => {
    const threaded = await openDb(t.current.url, { thread: true });
    const { sessionId } = await seedSession(t.current.db);
    const before = await t.current.db.session.findUniqueOrThrow({ where: { id: sessionId } });
    await new Promise((r) => setTimeout(r, 5));
    const hub = createEventHub(threaded.db, { url: t.current.url, lease: 8 });
    try {
      const evs = await Promise.all(Array.from({ length: 20 }, (_, i) => hub.publish(sessionId, notice(i))));
      expect(evs.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      const row = await t.current.db.session.findUniqueOrThrow({ where: { id: sessionId } });
      // Three leases of 8 at least, none handed out twice; a lease is the session's activity, as before.
      expect(row.lastSeq).toBeGreaterThanOrEqual(20);
      expect(row.lastSeq % 8).toBe(0);
      expect(row.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
      await expect(hub.publish("nosuchsession", notice(0))).rejects.toThrow(
        "No session nosuchsession: its events cannot be recorded.",
      );
    } finally {
      await hub.dispose();
      await threaded.close();
    }
  });

  it("posts events without a promise each: numbered and fanned out in order with published ones, written() waits for all of them", async () => {
    // Writes held until released, so written() is seen waiting.
    const real = eventStoreFor(t.current.url);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const store = { ...real, insert: async (events: SessionEvent[]) => (await held, real.insert(events)) };
    const hub = createEventHub(t.current.db, { url: t.current.url, store });
    const { sessionId } = await seedSession(t.current.db);
    const live = take(hub.subscribe(sessionId, 0), 4);
    const refused: unknown[] = [];
    hub.post(sessionId, notice(1), (err) => refused.push(err));
    const second = hub.publish(sessionId, notice(2));
    hub.post(sessionId, notice(3), (err) => refused.push(err));
    hub.post(sessionId, notice(4), (err) => refused.push(err));
    expect((await live).map((e) => [e.seq, (e as { text: string }).text])).toEqual([
      [1, "1"],
      [2, "2"],
      [3, "3"],
      [4, "4"],
    ]);
    let done = false;
    const written = hub.written(sessionId).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false);
    release();
    await written;
    expect((await second).seq).toBe(2);
    const rows = await t.current.db.sessionEvent.findMany({ where: { sessionId }, orderBy: { seq: "asc" } });
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(refused).toEqual([]);
    await hub.dispose();
    // A hub that is shut down tells the poster at once.
    hub.post(sessionId, notice(5), (err) => refused.push(err));
    expect(String(refused[0])).toMatch(/shut down/);
  });

  it("folds stored runs of deltas for a subscriber that asks, then hands live events one by one", async () => {
    const hub = createEventHub(t.current.db, { url: t.current.url });
    const { sessionId } = await seedSession(t.current.db);
    const delta = (text: string) => ({ type: "text.delta" as const, turnId: "t1", text });
    // 1,200 deltas: more than two database pages, so runs are folded across page reads too.
    for (let i = 0; i < 1_200; i++) void hub.publish(sessionId, delta(`${i} `));
    await hub.publish(sessionId, notice(0));
    const ctl = new AbortController();
    const sub = hub.subscribe(sessionId, 0, ctl.signal, { folded: true });
    const first: SessionEvent[] = [];
    for await (const ev of sub) {
      first.push(ev);
      if (ev.type === "notice") break;
    }
    expect(first.length).toBeLessThanOrEqual(4);
    expect(first.map((e) => (e.type === "text.delta" ? e.text : "")).join("")).toBe(
      Array.from({ length: 1_200 }, (_, i) => `${i} `).join(""),
    );
    expect(first.at(-1)).toMatchObject({ type: "notice", seq: 1_201 });
    // Resuming after a folded event repeats nothing; live deltas still come one at a time.
    const live = hub.subscribe(sessionId, first[0].seq, ctl.signal, { folded: true });
    const rest = take(live, first.length - 1 + 2);
    await hub.publish(sessionId, delta("live-1"));
    await hub.publish(sessionId, delta("live-2"));
    const got = await rest;
    expect(got.map((e) => e.seq)).toEqual([...first.slice(1).map((e) => e.seq), 1_202, 1_203]);
    expect(got.slice(-2).map((e) => (e as { text: string }).text)).toEqual(["live-1", "live-2"]);
    ctl.abort();
    await hub.dispose();
  });

  it("never hands out a number twice with two writers on one database", async () => {
    const a = createEventHub(t.current.db, { url: t.current.url });
    const b = createEventHub(t.current.db, { url: t.current.url });
    const { sessionId } = await seedSession(t.current.db);
    const all = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).publish(sessionId, notice(i))));
    const seqs = all.map((e) => e.seq);
    expect(new Set(seqs).size).toBe(40);
    // Each writer numbers its own events in order (from its own reserved block).
    for (const parity of [0, 1]) {
      const own = seqs.filter((_, i) => i % 2 === parity);
      expect(own).toEqual([...own].sort((x, y) => x - y));
      expect(own.at(-1)! - own[0]).toBe(19);
    }
    await Promise.all([a.dispose(), b.dispose()]);
    const rows = await t.current.db.sessionEvent.findMany({ where: { sessionId }, orderBy: { seq: "asc" } });
    expect(rows.map((r) => r.seq)).toEqual([...seqs].sort((x, y) => x - y));
  });

  it("resumes after a seq with no gap and no duplicate while events keep coming, for several subscribers", async () => {
    const hub = createEventHub(t.current.db, { url: t.current.url });
    const { sessionId } = await seedSession(t.current.db);
    for (let i = 0; i < 30; i++) await hub.publish(sessionId, notice(i));
    const ctl = new AbortController();
    const subs = [0, 10, 29, 30].map((after) => ({
      after,
      got: take(hub.subscribe(sessionId, after, ctl.signal), 60 - after),
    }));
    // Publish while the subscribers are still reading their backlog.
    for (let i = 30; i < 60; i++) void hub.publish(sessionId, notice(i));
    for (const s of subs) {
      const got = await s.got;
      expect(got.map((e) => e.seq)).toEqual(Array.from({ length: 60 - s.after }, (_, i) => s.after + i + 1));
    }
    ctl.abort();
    await hub.dispose();
  });

  it("sends a subscriber that falls behind back to the database without losing events", async () => {
    const hub = createEventHub(t.current.db, { url: t.current.url, subscriberBuffer: 3, batchSize: 2 });
    const { sessionId } = await seedSession(t.current.db);
    const ctl = new AbortController();
    const gen = hub.subscribe(sessionId, 0, ctl.signal);
    const firstP = gen.next();
    await Promise.all(Array.from({ length: 25 }, (_, i) => hub.publish(sessionId, notice(i + 1))));
    const first = await firstP;
    expect(first.done).toBe(false);
    const rest = await take(gen, 24);
    expect([first.value!.seq, ...rest.map((e) => e.seq)]).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    ctl.abort();
    await hub.dispose();
  }, 20_000);

  it("serves a resuming subscriber the events whose write has not committed yet", async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const real = t.current.db;
    // The server's own store, with its writes held until the gate opens.
    const store = eventStoreFor(t.current.url);
    const held = {
      async insert(events: SessionEvent[]) {
        await gate;
        await store.insert(events);
      },
      close: () => store.close(),
    };
    const hub = createEventHub(real, { store: held, url: t.current.url });
    const { sessionId } = await seedSession(real);
    const durable = Array.from({ length: 5 }, (_, i) => hub.publish(sessionId, notice(i + 1)));
    await new Promise((r) => setTimeout(r, 50));
    expect(await real.sessionEvent.count({ where: { sessionId } })).toBe(0);
    const ctl = new AbortController();
    const got = take(hub.subscribe(sessionId, 2, ctl.signal), 5);
    await new Promise((r) => setTimeout(r, 50));
    open();
    await Promise.all(durable);
    await hub.publish(sessionId, notice(6));
    await hub.publish(sessionId, notice(7));
    expect((await got).map((e) => e.seq)).toEqual([3, 4, 5, 6, 7]);
    ctl.abort();
    await hub.dispose();
  });

  it("ends subscriptions on abort and on dispose", async () => {
    const hub = createEventHub(t.current.db, { url: t.current.url });
    const { sessionId } = await seedSession(t.current.db);
    const ctl = new AbortController();
    const aborted = take(hub.subscribe(sessionId, 0, ctl.signal), 100);
    const disposed = take(hub.subscribe(sessionId, 0), 100);
    await hub.publish(sessionId, notice(1));
    ctl.abort();
    expect((await aborted).length).toBeLessThanOrEqual(1);
    await hub.dispose();
    expect((await disposed).map((e) => e.seq)).toEqual([1]);
    await expect(hub.publish(sessionId, notice(2))).rejects.toThrow(/shut down/);
  });

  it("writes the other sessions' events of a batch that a deleted session's events make fail, and lets that session go quietly", async () => {
    const real = eventStoreFor(t.current.url);
    let inserts = 0;
    const store = { ...real, insert: (...args: Parameters<typeof real.insert>) => (inserts++, real.insert(...args)) };
    const logged: string[] = [];
    const hub = createEventHub(t.current.db, {
      url: t.current.url,
      store,
      writeDelayMs: 50,
      log: (m, e) => logged.push(`${m}: ${(e as Error)?.message ?? ""}`),
    });
    const [a, b] = [await seedSession(t.current.db), await seedSession(t.current.db)];
    await hub.publish(b.sessionId, notice(0));
    inserts = 0;
    // In one batch: events of a session deleted meanwhile (its numbers were leased already) and of a live one.
    await t.current.db.session.delete({ where: { id: b.sessionId } });
    const gone = hub.publish(b.sessionId, notice(1));
    const kept = [hub.publish(a.sessionId, notice(2)), hub.publish(a.sessionId, notice(3))];
    // Dropped on purpose (the session is gone), not a fault: no error for its publisher, no log line.
    await expect(gone).resolves.toMatchObject({ seq: 2 });
    expect((await Promise.all(kept)).map((e) => e.seq)).toEqual([1, 2]);
    expect(await t.current.db.sessionEvent.count({ where: { sessionId: a.sessionId } })).toBe(2);
    // The batch once, then each session's rows once: a foreign key is not retried.
    expect(inserts).toBe(3);
    // Later events of the deleted session are dropped without an insert.
    await hub.publish(b.sessionId, notice(4));
    hub.post(b.sessionId, notice(5), (err) => logged.push(`refused: ${String(err)}`));
    await hub.written(b.sessionId);
    expect(inserts).toBe(3);
    expect(logged).toEqual([]);
    await hub.dispose();
  });

  it("still logs a foreign key failure of a session that exists", async () => {
    const real = eventStoreFor(t.current.url);
    const logged: string[] = [];
    // A store whose rows are refused by a foreign key for a live session: a real fault.
    const store = {
      ...real,
      insert: async () => {
        throw new Error("FOREIGN KEY constraint failed");
      },
    };
    const hub = createEventHub(t.current.db, {
      url: t.current.url,
      store,
      writeDelayMs: 0,
      log: (m) => logged.push(m),
    });
    const a = await seedSession(t.current.db);
    await expect(hub.publish(a.sessionId, notice(1))).rejects.toThrow(/FOREIGN KEY/);
    expect(logged.filter((m) => /could not be written/.test(m))).toHaveLength(1);
    await hub.dispose();
  });

  it("rejects events for a session that does not exist, clearly", async () => {
    const hub = createEventHub(t.current.db, { url: t.current.url });
    await expect(hub.publish("no-such-session", notice(1))).rejects.toThrow(/No session no-such-session/);
    await hub.dispose();
  });
});
