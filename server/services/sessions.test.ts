import { describe, expect, it } from "vitest";
import { openDb } from "../db";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/pipeline";
import { createEventHub } from "../hub/events";
import { createSessionService, titleFrom } from "./sessions";

describe("session titles from a first message", () => {
  it("takes the first line with text, whitespace folded, cut at a word", () => {
    expect(titleFrom("\n\n  Fix the   login bug\nsecond line")).toBe("Fix the login bug");
    expect(titleFrom("   \n\t")).toBeUndefined();
    const long = titleFrom(
      "Refactor the payment module so that every provider adapter shares one retry policy and logs",
    );
    expect(long).toBe("Refactor the payment module so that every provider adapter…");
    expect(titleFrom("x".repeat(100))).toBe(`${"x".repeat(60)}…`);
  });
});

describe.each(testDatabases())("sessions on %s", (provider) => {
  const t = useTestDb(provider);

  it.each([
    ["through Prisma", false],
    ["as one plain statement", true],
  ])("names a new session after its first message once, and a rename wins (%s)", async (_, plain) => {
    const { actor } = await seedSession(t.current.db);
    const svc = createSessionService(t.current.db, plain ? { dbProvider: provider } : {});
    const s = await svc.create(actor, {});
    expect(s.title).toMatch(/^Session \d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    await svc.nameFromFirstMessage(s.id, "Add a dark mode toggle\nwith details");
    expect((await svc.get(actor, s.id)).title).toBe("Add a dark mode toggle");
    await svc.nameFromFirstMessage(s.id, "something else");
    expect((await svc.get(actor, s.id)).title).toBe("Add a dark mode toggle");

    const named = await svc.create(actor, { title: "My plan" });
    await svc.nameFromFirstMessage(named.id, "hello");
    expect((await svc.get(actor, named.id)).title).toBe("My plan");
    expect((await svc.rename(actor, named.id, "Better name")).title).toBe("Better name");
  });

  it("names only a title still exactly the default, and moves the session up the list as Prisma did", async () => {
    const { actor } = await seedSession(t.current.db);
    const db = t.current.db;
    const svc = createSessionService(db, { dbProvider: provider });
    // Created first: only its naming can put it ahead of the sessions made after it.
    const s = await svc.create(actor, {});
    const before = (await db.session.findUniqueOrThrow({ where: { id: s.id } })).updatedAt;
    const near = [
      "Session 2026-12-02 10:00 notes",
      "session 2026-12-02 10:00",
      "Session 2026-12-0x 10:00",
      "Old Session 2026-12-02 10:00",
    ];
    for (const title of near) {
      const other = await svc.create(actor, { title });
      await svc.nameFromFirstMessage(other.id, "renamed?");
      expect((await svc.get(actor, other.id)).title).toBe(title);
    }
    await new Promise((r) => setTimeout(r, 5));
    await svc.nameFromFirstMessage(s.id, `Quote ' and "$1" ? kept`);
    const row = await db.session.findUniqueOrThrow({ where: { id: s.id } });
    expect(row.title).toBe(`Quote ' and "$1" ? kept`);
    expect(row.updatedAt.getTime()).toBeGreaterThan(before.getTime());
    expect(Math.abs(row.updatedAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect((await svc.list(actor))[0].id).toBe(s.id);
    // A first message with a NUL names the session too: on PostgreSQL, whose text holds none,
    // the send used to fail with a raw database error after its turn had started.
    const nul = await svc.create(actor, {});
    await svc.nameFromFirstMessage(nul.id, "grep for \u0000 bytes");
    expect((await svc.get(actor, nul.id)).title).toBe(
      provider === "postgresql" ? "grep for \u2400 bytes" : "grep for \u0000 bytes",
    );
  });

  it("names a session through the query thread's driver as the server does", async () => {
    const { actor } = await seedSession(t.current.db);
    const threaded = await openDb(t.current.url, { thread: true });
    try {
      const svc = createSessionService(threaded.db, { dbProvider: provider });
      const s = await svc.create(actor, {});
      await svc.nameFromFirstMessage(s.id, "Fix the flaky upload test");
      const row = await t.current.db.session.findUniqueOrThrow({ where: { id: s.id } });
      expect(row.title).toBe("Fix the flaky upload test");
      expect(Math.abs(row.updatedAt.getTime() - Date.now())).toBeLessThan(60_000);
    } finally {
      await threaded.close();
    }
  });

  it("deletes a session with everything recorded in it, but not while a turn runs or for another org", async () => {
    const { actor, session } = await seedSession(t.current.db);
    const other = await seedSession(t.current.db);
    const removed: string[] = [];
    const svc = createSessionService(t.current.db, { onRemoved: (id) => removed.push(id) });
    const db = t.current.db;
    const turn = await db.turn.create({ data: { sessionId: session.id, status: "running" } });
    await db.message.create({
      data: { sessionId: session.id, turnId: turn.id, position: 0, role: "user", content: [] },
    });
    await db.sessionEvent.create({ data: { sessionId: session.id, seq: 1, type: "turn.started", payload: {} } });
    await expect(svc.remove(actor, session.id)).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringMatching(/turn is running/),
    });
    await expect(svc.remove(other.actor, session.id)).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(svc.rename(other.actor, session.id, "mine now")).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(await db.session.count({ where: { id: session.id } })).toBe(1);

    await db.turn.update({ where: { id: turn.id }, data: { status: "completed" } });
    expect(removed).toEqual([]);
    await svc.remove(actor, session.id);
    expect(removed).toEqual([session.id]);
    expect(await db.session.count({ where: { id: session.id } })).toBe(0);
    expect(await db.message.count({ where: { sessionId: session.id } })).toBe(0);
    expect(await db.sessionEvent.count({ where: { sessionId: session.id } })).toBe(0);
    expect(await db.turn.count({ where: { sessionId: session.id } })).toBe(0);
    await expect(svc.remove(actor, session.id)).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("writes the session's events still waiting for the write-behind before deleting it", async () => {
    const { actor, session } = await seedSession(t.current.db);
    const other = await seedSession(t.current.db);
    const logged: string[] = [];
    // A long window, so the events are surely still waiting when the delete comes.
    const hub = createEventHub(t.current.db, { url: t.current.url, writeDelayMs: 300, log: (m) => logged.push(m) });
    const waited: string[] = [];
    const svc = createSessionService(t.current.db, {
      beforeRemove: (id) => (waited.push(id), hub.written(id)),
    });
    try {
      // Another org's delete is refused before any wait: how long it took would say the session is live.
      await expect(svc.remove(other.actor, session.id)).rejects.toMatchObject({ code: "NOT_FOUND" });
      expect(waited).toEqual([]);
      const notice = (text: string) => ({ type: "notice" as const, level: "info" as const, code: "n", text });
      const last = hub.publish(session.id, notice("turn ended"));
      const others = hub.publish(other.session.id, notice("elsewhere"));
      await svc.remove(actor, session.id);
      expect(waited).toEqual([session.id]);
      // Written before the delete took them with it; the batch did not fail on their foreign key.
      await expect(last).resolves.toMatchObject({ seq: 1 });
      await expect(others).resolves.toMatchObject({ seq: 1 });
      expect(await t.current.db.session.count({ where: { id: session.id } })).toBe(0);
      expect(await t.current.db.sessionEvent.count({ where: { sessionId: session.id } })).toBe(0);
      expect(await t.current.db.sessionEvent.count({ where: { sessionId: other.session.id } })).toBe(1);
      expect(logged.filter((m) => /could not be written/.test(m))).toEqual([]);
    } finally {
      await hub.dispose();
    }
  });
});
