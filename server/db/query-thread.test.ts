// The query thread's client behaves as Prisma's own on both databases: lazy queries, batched
// transactions that roll back together, Prisma's error codes, raw queries, bytes, dates, the
// turn rows, and a thread that dies is replaced without losing the next query.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { ensureLocalActor } from "../services/local-user";
import { startQueryThread, type QueryThread } from "./query-thread";
import type { DirectDb } from "./index";

describe.each(testDatabases())("query thread on %s", (provider) => {
  const t = useTestDb(provider);
  const withThread = async (f: (q: QueryThread) => Promise<void>) => {
    const q = startQueryThread(t.current.url);
    try {
      await f(q);
    } finally {
      await q.close();
    }
  };

  it("reads and writes what the main thread's client sees, dates and JSON intact", () =>
    withThread(async ({ db }) => {
      const actor = await ensureLocalActor(db);
      const made = await db.session.create({
        data: { title: "t", ownerId: actor.userId, orgId: actor.orgId, workspace: "", activatedTools: ["a", "b"] },
      });
      expect(made.createdAt).toBeInstanceOf(Date);
      const seen = await t.current.db.session.findUniqueOrThrow({ where: { id: made.id } });
      expect(seen.activatedTools).toEqual(["a", "b"]);
      expect(seen.createdAt.getTime()).toBe(made.createdAt.getTime());
      const { lastSeq } = await db.session.update({
        where: { id: made.id },
        data: { lastSeq: { increment: 256 } },
        select: { lastSeq: true },
      });
      expect(lastSeq).toBe(256);
      expect(await db.session.count({ where: { orgId: actor.orgId } })).toBe(1);
    }));

  it("runs the turn rows on the thread too, with the database's errors", () =>
    withThread(async ({ db, rows }) => {
      const actor = await ensureLocalActor(db);
      const { id: sessionId } = await db.session.create({
        data: { title: "rows", ownerId: actor.userId, orgId: actor.orgId, workspace: "" },
      });
      const begun = await rows.begin({ sessionId, orgId: actor.orgId, text: "over the thread" });
      if (!begun.ok) throw new Error("not begun");
      expect(await rows.conversation(sessionId)).toEqual([
        { role: "user", content: [{ type: "text", text: "over the thread" }] },
      ]);
      expect(await rows.begin({ sessionId, text: "again" })).toEqual({ ok: false, reason: "busy" });
      await expect(
        rows.addMessage({ sessionId, turnId: begun.turnId, position: begun.position, role: "user", content: [] }),
      ).rejects.toThrow(/unique/i);
      expect(await t.current.db.turn.count({ where: { sessionId, status: "running" } })).toBe(1);
    }));

  it("runs nothing until a query is awaited, like Prisma", () =>
    withThread(async ({ db }) => {
      const actor = await ensureLocalActor(db);
      const pending = db.session.create({
        data: { title: "lazy", ownerId: actor.userId, orgId: actor.orgId, workspace: "" },
      });
      await new Promise((r) => setTimeout(r, 100));
      expect(await t.current.db.session.count({ where: { title: "lazy" } })).toBe(0);
      await pending;
      expect(await t.current.db.session.count({ where: { title: "lazy" } })).toBe(1);
    }));

  it("commits a $transaction batch together and rolls it back together", () =>
    withThread(async ({ db }) => {
      const actor = await ensureLocalActor(db);
      const s = await db.session.create({
        data: { title: "t", ownerId: actor.userId, orgId: actor.orgId, workspace: "" },
      });
      const [turn, session] = await db.$transaction([
        db.turn.create({ data: { sessionId: s.id } }),
        db.session.update({ where: { id: s.id }, data: { status: "running" } }),
      ]);
      expect(turn.sessionId).toBe(s.id);
      expect(session.status).toBe("running");

      const failing = db.$transaction([
        db.turn.create({ data: { sessionId: s.id } }),
        db.session.update({ where: { id: "no-such-session" }, data: { status: "idle" } }),
      ]);
      await expect(failing).rejects.toMatchObject({ code: "P2025" });
      expect(await t.current.db.turn.count({ where: { sessionId: s.id } })).toBe(1);
      expect((await t.current.db.session.findUniqueOrThrow({ where: { id: s.id } })).status).toBe("running");
    }));

  it("keeps Prisma's error codes, so callers can tell a duplicate or a missing row", () =>
    withThread(async ({ db }) => {
      const actor = await ensureLocalActor(db);
      await expect(
        db.user.create({ data: { email: (await db.user.findFirstOrThrow()).email, name: "again" } }),
      ).rejects.toMatchObject({ code: "P2002" });
      await expect(db.session.update({ where: { id: "missing" }, data: { title: "x" } })).rejects.toMatchObject({
        code: "P2025",
      });
      expect(actor.orgId).toBeTruthy();
    }));

  it("runs raw queries and stores bytes exactly", () =>
    withThread(async ({ db }) => {
      const rows = await db.$queryRawUnsafe<{ one: unknown }[]>("SELECT 1 AS one");
      expect(Number(rows[0].one)).toBe(1);
      const actor = await ensureLocalActor(db);
      const s = await db.session.create({
        data: { title: "t", ownerId: actor.userId, orgId: actor.orgId, workspace: "" },
      });
      const bytes = Buffer.from([0x00, 0xff, 0xfe, 0x41, 0x00, 0xc3, 0x28]);
      await db.spill.create({
        data: {
          id: "b1",
          sessionId: s.id,
          bytes,
          size: bytes.length,
          sha256: "x",
          expiresAt: new Date(Date.now() + 60_000),
        },
      });
      const row = await db.spill.findUniqueOrThrow({ where: { id: "b1" } });
      expect(Buffer.from(row.bytes).equals(bytes)).toBe(true);
    }));

  it("runs plain SQL: rows, RETURNING, changed counts, a lock waited out, errors kept", () =>
    withThread(async ({ db }) => {
      const actor = await ensureLocalActor(db);
      const s = await db.session.create({
        data: { title: "t", ownerId: actor.userId, orgId: actor.orgId, workspace: "" },
      });
      const p = (n: number) => (provider === "postgresql" ? `$${n}` : "?");
      const read = `SELECT "id","title" FROM "Session" WHERE "id" = ${p(1)}`;
      expect(await db.$queryRawUnsafe(read, s.id)).toEqual([{ id: s.id, title: "t" }]);
      expect(await db.$queryRawUnsafe(read, "missing")).toEqual([]);
      // Dates and booleans bind as Prisma binds them.
      const found = `SELECT "id" FROM "Session" WHERE "id" = ${p(1)} AND "createdAt" <= ${p(2)} AND ${p(3)}`;
      expect(await db.$queryRawUnsafe(found, s.id, new Date(Date.now() + 60_000), true)).toEqual([{ id: s.id }]);
      expect(await db.$queryRawUnsafe(found, s.id, new Date(0), true)).toEqual([]);
      const lease = `UPDATE "Session" SET "lastSeq" = "lastSeq" + ${p(1)} WHERE "id" = ${p(2)} RETURNING "lastSeq"`;
      expect(await db.$queryRawUnsafe(lease, 256, s.id)).toEqual([{ lastSeq: 256 }]);
      const rename = `UPDATE "Session" SET "title" = ${p(1)} WHERE "id" = ${p(2)}`;
      expect(await db.$executeRawUnsafe(rename, "u", s.id)).toBe(1);
      expect(await db.$executeRawUnsafe(rename, "u", "missing")).toBe(0);
      // Another connection holds the write lock for a while: the write waits, then lands.
      if (provider === "sqlite") {
        const other = t.current.db;
        const held = other.$transaction(async (tx) => {
          await tx.session.update({ where: { id: s.id }, data: { title: "held" } });
          await new Promise((r) => setTimeout(r, 300));
        });
        await new Promise((r) => setTimeout(r, 50));
        expect(await db.$executeRawUnsafe(rename, "after", s.id)).toBe(1);
        await held;
      }
      expect((await t.current.db.session.findUniqueOrThrow({ where: { id: s.id } })).title).toBe(
        provider === "sqlite" ? "after" : "u",
      );
      await expect(db.$queryRawUnsafe(`SELECT "nope" FROM "Session"`)).rejects.toThrow(/nope/);
      // In a batch, raw SQL stays in Prisma's transaction: all or nothing.
      await expect(
        db.$transaction([db.$executeRawUnsafe(rename, "batched", s.id), db.session.create({ data: {} as never })]),
      ).rejects.toThrow();
      expect((await db.session.findUniqueOrThrow({ where: { id: s.id } })).title).not.toBe("batched");
    }));

  it("refuses what needs a client on the calling thread, saying so", () =>
    withThread(async ({ db }) => {
      // The Db type already refuses it at compile time; a caller that casts still gets a clear error.
      const direct = db as unknown as DirectDb;
      await expect(direct.$transaction(async () => 1)).rejects.toThrow(/interactive transaction/);
      expect(() => db.$extends({})).toThrow(/not available on the query thread/);
      await expect(
        (db as unknown as { nosuchmodel: { findMany(): Promise<unknown> } }).nosuchmodel.findMany(),
      ).rejects.toThrow(/no nosuchmodel\.findMany/);
      expect("then" in db && (db as unknown as { then?: unknown }).then).toBeFalsy();
    }));

  it("fails the queries out when its thread dies, and the next query starts a new one", async () => {
    const q = startQueryThread(t.current.url);
    try {
      await ensureLocalActor(q.db);
      const slow = q.db.$queryRawUnsafe(provider === "postgresql" ? "SELECT pg_sleep(2)" : "SELECT 1");
      const settled = slow.then(
        () => "ran",
        (err: Error) => err.message,
      );
      await q.terminate();
      expect(await settled).toMatch(provider === "postgresql" ? /query thread exited/ : /ran|query thread exited/);
      expect(await q.db.user.count()).toBe(1);
    } finally {
      await q.close();
    }
  });
});
