// What PostgreSQL can hold (storable.ts): the character rules, and a real pool whose queries,
// pooled or in a transaction, store a NUL in a text column and jsonb of the escapes it refuses.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { openPgPool } from "./driver";
import { openDb } from "./index";
import { seedSession } from "../testing/hub";
import { jsonbText, pgValue, storable, storableJson, storableText } from "./storable";

describe("storable text", () => {
  it("puts ␀ for NUL and U+FFFD for an unpaired surrogate, and keeps pairs and other text", () => {
    expect(storableText("plain é 😀")).toBe("plain é 😀");
    expect(storableText("a\u0000b\u0000")).toBe("a\u2400b\u2400");
    expect(storableText("\ud800")).toBe("\ufffd");
    expect(storableText("x\udc00")).toBe("x\ufffd");
    expect(storableText("\ud800\ud83d\ude00\ude00")).toBe("\ufffd😀\ufffd");
    expect(storableJson({ "k\u0000": ["\ud800", 1, null, { t: "ok" }] })).toEqual({
      "k\u2400": ["\ufffd", 1, null, { t: "ok" }],
    });
  });

  it("rewrites JSON text only when it holds an escape jsonb refuses", () => {
    const clean = JSON.stringify({ text: "😀 \\u0000 as written text" });
    expect(jsonbText(clean)).toBe(clean);
    expect(jsonbText(JSON.stringify({ text: "a\u0000b", high: "\ud800" }))).toBe('{"text":"a␀b","high":"\ufffd"}');
    // An escaped backslash before u0000 is text, and stays so.
    const backslash = JSON.stringify({ t: "\\u0000\u0000" });
    expect(JSON.parse(jsonbText(backslash))).toEqual({ t: "\\u0000\u2400" });
    expect(pgValue("a\u0000")).toBe("a\u2400");
    // A write's data: dates, bytes and undefined kept; the same object when nothing changes.
    const when = new Date();
    const bytes = new Uint8Array([0]);
    const data = { title: "t\u0000", at: when, bytes, skip: undefined, nested: { list: ["ok", "\ud800"] } };
    expect(storable(data)).toEqual({ ...data, title: "t\u2400", nested: { list: ["ok", "\ufffd"] } });
    expect((storable(data) as typeof data).at).toBe(when);
    expect((storable(data) as typeof data).bytes).toBe(bytes);
    const untouched = { title: "fine", nested: { list: ["ok"] } };
    expect(storable(untouched)).toBe(untouched);
    // A Json column's keys are a model's or a person's text too.
    expect(storable({ payload: { "k\u0000": "v", ok: 1 } })).toEqual({ payload: { "k\u2400": "v", ok: 1 } });
    expect(storableJson(undefined)).toBeNull();
    expect(pgValue(5)).toBe(5);
    expect(pgValue(["a", ["b\u0000"]])).toEqual(["a", ["b\u2400"]]);
    const ids = ["a", "b"];
    expect(pgValue(ids)).toBe(ids);
  });
});

describe.each(testDatabases().filter((p) => p === "postgresql"))("a pool on %s", (provider) => {
  const t = useTestDb(provider);

  it("stores a NUL in text and the refused escapes in jsonb, through pool.query and a transaction's client", async () => {
    const pool = openPgPool(t.current.url, 2);
    try {
      await pool.query(`CREATE TABLE "Probe" ("t" text, "j" jsonb)`);
      const json = jsonbText(JSON.stringify({ text: "a\u0000\ud800" }));
      await pool.query(`INSERT INTO "Probe" VALUES ($1, $2::jsonb)`, ["one\u0000", json]);
      // An array parameter's strings too: ids from a person's request, say.
      const { rows: any } = await pool.query(`SELECT count(*)::int AS "n" FROM "Probe" WHERE "t" = ANY($1::text[])`, [
        ["one\u0000", "x\u0000"],
      ]);
      expect(any).toEqual([{ n: 1 }]);
      const c = await pool.connect();
      await c.query("BEGIN");
      await c.query(`INSERT INTO "Probe" VALUES ($1, $2::jsonb)`, ["two\u0000", json]);
      await c.query("COMMIT");
      c.release();
      const { rows } = await pool.query(`SELECT "t", "j" FROM "Probe" ORDER BY "t"`);
      expect(rows).toEqual([
        { t: "one\u2400", j: { text: "a\u2400\ufffd" } },
        { t: "two\u2400", j: { text: "a\u2400\ufffd" } },
      ]);
    } finally {
      await pool.end();
    }
  });

  it("lets Prisma write and find a person's or a model's text with NUL and unpaired surrogates, on the query thread too", async () => {
    const { sessionId } = await seedSession(t.current.db);
    await t.current.db.session.update({ where: { id: sessionId }, data: { title: "renamed\u0000\ud800" } });
    await t.current.db.sessionEvent.create({
      data: {
        sessionId,
        seq: 1,
        type: "notice",
        payload: { text: "a\u0000b", list: ["\udc00"], "key\u0000\ud800": 1 },
      },
    });
    expect(await t.current.db.session.findUnique({ where: { id: sessionId }, select: { title: true } })).toEqual({
      title: "renamed\u2400\ufffd",
    });
    // A filter with the same characters finds what was stored, instead of a database error.
    expect(await t.current.db.session.count({ where: { id: sessionId, title: "renamed\u0000\ud800" } })).toBe(1);
    expect(
      await t.current.db.session.findFirst({ where: { title: { contains: "\u0000" } }, select: { id: true } }),
    ).toEqual({
      id: sessionId,
    });
    const row = await t.current.db.sessionEvent.findUnique({ where: { sessionId_seq: { sessionId, seq: 1 } } });
    expect(row?.payload).toEqual({ text: "a\u2400b", list: ["\ufffd"], "key\u2400\ufffd": 1 });
    const threaded = await openDb(t.current.url, { thread: true });
    try {
      await threaded.db.session.update({ where: { id: sessionId }, data: { title: "again\u0000" } });
      expect((await threaded.db.session.findUnique({ where: { id: sessionId } }))?.title).toBe("again\u2400");
      expect(await threaded.db.$queryRawUnsafe(`SELECT $1::text AS "t"`, "raw\u0000")).toEqual([{ t: "raw\u2400" }]);
    } finally {
      await threaded.close();
    }
  });

  it("sends a raw query's NUL as ␀ too (raw queries run on the adapter's own pool)", async () => {
    const { sessionId } = await seedSession(t.current.db);
    const db = t.current.db;
    expect(
      await db.$executeRawUnsafe(`UPDATE "Session" SET "title" = $1 WHERE "id" = $2`, "raw\u0000", sessionId),
    ).toBe(1);
    expect(await db.$queryRawUnsafe(`SELECT "title" FROM "Session" WHERE "title" = $1`, "raw\u0000")).toEqual([
      { title: "raw\u2400" },
    ]);
    expect(await db.$queryRaw`SELECT ${"tagged\u0000"}::text AS "t", ${7}::int AS "n"`).toEqual([
      { t: "tagged\u2400", n: 7 },
    ]);
    // A session id from a URL with a NUL in it is simply not found.
    expect(await db.$queryRawUnsafe(`SELECT "id" FROM "Session" WHERE "id" = $1`, "nope\u0000")).toEqual([]);
  });
});
