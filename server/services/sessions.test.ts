import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/pipeline";
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

  it("names a new session after its first message once, and a rename wins", async () => {
    const { actor } = await seedSession(t.current.db);
    const svc = createSessionService(t.current.db);
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
});
