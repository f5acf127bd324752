// What PostgreSQL can hold (storable.ts): the character rules, and a real pool whose queries,
// pooled or in a transaction, store a NUL in a text column and jsonb of the escapes it refuses.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { openPgPool } from "./driver";
import { jsonbText, pgValue, storableJson, storableText } from "./storable";

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
    expect(pgValue(5)).toBe(5);
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
});
