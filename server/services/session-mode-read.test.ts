// The mode read the engine makes before each model request (session-modes.ts: modeFor), through
// plain SQL when the provider is named, on real SQLite and PostgreSQL, in this thread and on
// the query thread: the same mode and forbidden modes as Prisma's read, the org's forbidding
// applied, nothing written by a read, and no session for an unknown id.
import { describe, expect, it } from "vitest";
import { openDb } from "../db";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/hub";
import { modeFor } from "./session-modes";

describe.each(testDatabases())("the session mode read on %s", (provider) => {
  const t = useTestDb(provider);

  it("gives Prisma's answer, here and on the query thread, and an org's forbidding applies", async () => {
    const db = t.current.db;
    const { sessionId, orgId } = await seedSession(db);
    await db.session.update({ where: { id: sessionId }, data: { mode: "accept-edits" } });
    await db.org.update({ where: { id: orgId }, data: { forbiddenModes: ["plan"] } });
    const threaded = await openDb(t.current.url, { thread: true });
    try {
      const allowed = { mode: "accept-edits", forbidden: ["plan"] };
      expect(await modeFor(db, sessionId)).toEqual(allowed);
      expect(await modeFor(db, sessionId, undefined, provider)).toEqual(allowed);
      expect(await modeFor(threaded.db, sessionId, undefined, provider)).toEqual(allowed);

      await db.org.update({ where: { id: orgId }, data: { forbiddenModes: ["accept-edits", "auto"] } });
      const forbidden = { mode: "ask", forbidden: ["accept-edits", "auto"] };
      expect(await modeFor(db, sessionId, undefined, provider)).toEqual(forbidden);
      expect(await modeFor(threaded.db, sessionId, undefined, provider)).toEqual(forbidden);
      // A read moves nothing back (only a dispatch's does, with its event).
      expect((await db.session.findUnique({ where: { id: sessionId } }))?.mode).toBe("accept-edits");
    } finally {
      await threaded.close();
    }
  });

  it("fails closed on a forbidden-modes column that holds no list: all but ask are forbidden", async () => {
    const db = t.current.db;
    const { sessionId, orgId } = await seedSession(db);
    await db.session.update({ where: { id: sessionId }, data: { mode: "auto" } });
    const threaded = await openDb(t.current.url, { thread: true });
    const closed = { mode: "ask", forbidden: ["plan", "accept-edits", "auto"] };
    const set = (value: string) =>
      db.$executeRawUnsafe(
        provider === "sqlite"
          ? `UPDATE "Org" SET "forbiddenModes" = ? WHERE "id" = ?`
          : `UPDATE "Org" SET "forbiddenModes" = $1::jsonb WHERE "id" = $2`,
        value,
        orgId,
      );
    try {
      // JSON that is not a list, on both databases: every read path fails closed.
      for (const value of [`{"auto":true}`, `"auto"`, `null`, `7`]) {
        await set(value);
        expect(await modeFor(db, sessionId)).toEqual(closed);
        expect(await modeFor(db, sessionId, undefined, provider)).toEqual(closed);
        expect(await modeFor(threaded.db, sessionId, undefined, provider)).toEqual(closed);
      }
      // Text that is no JSON at all (SQLite keeps whatever text it is given).
      if (provider === "sqlite") {
        await set(`["auto"`);
        expect(await modeFor(threaded.db, sessionId, undefined, provider)).toEqual(closed);
        // Prisma's own raw read refuses the text outright, which allows nothing either.
        await expect(modeFor(db, sessionId, undefined, provider)).rejects.toThrow(/JSON/);
      }
      await set(`["plan"]`);
      expect(await modeFor(threaded.db, sessionId, undefined, provider)).toEqual({ mode: "auto", forbidden: ["plan"] });
    } finally {
      await threaded.close();
    }
  });

  it("finds no session for an unknown id, nor for one that is SQL text", async () => {
    for (const id of ["nosuchsession", `x' OR '1'='1`]) {
      expect(await modeFor(t.current.db, id, undefined, provider)).toBeUndefined();
    }
  });
});
