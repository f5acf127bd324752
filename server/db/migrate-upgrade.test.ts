// A database of the previous version keeps its data through the newest migration: every
// committed migration but the last is applied by hand, rows of the tables the last one rebuilds
// are written, and the server's own migrator applies the rest, as a start after an upgrade does.
// A server of the previous version still running on it (PostgreSQL, during an upgrade) must
// still be able to write its rows.
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { testDatabases } from "../testing/db";
import { migratePostgres, migrateSqlite } from "./migrate";
import { withPostgresBefore, withSqliteBefore } from "../testing/migrated-before";

const KEY_MIGRATION = "20261203142649_session_event_key";

// Sessions only: the seed runs with foreign keys off, as nothing but the cascade is checked.
const SEED = [
  `INSERT INTO "Session" ("id","title","ownerId","orgId","workspace","updatedAt") VALUES ('s1','t','u1','o1','',CURRENT_TIMESTAMP), ('s2','t','u1','o1','',CURRENT_TIMESTAMP)`,
];
const EVENTS: [string, string, number, string][] = [
  ["e1", "s1", 1, '{"type":"text.delta","turnId":"t1","text":"a"}'],
  ["e2", "s1", 2, '{"type":"text.delta","turnId":"t1","text":"b"}'],
  ["e3", "s2", 1, '{"type":"notice","text":"c"}'],
];

describe.each(testDatabases())("upgrading a %s database to the event key", (provider) => {
  it("keeps every event, keyed by session and seq, and takes the rows of both versions", async () => {
    if (provider === "sqlite")
      return withSqliteBefore(KEY_MIGRATION, (file, db) => {
        db.pragma("foreign_keys = OFF");
        for (const s of SEED) db.exec(s);
        const insert = db.prepare(
          `INSERT INTO "SessionEvent" ("id","sessionId","seq","type","payload") VALUES (?,?,?,'x',?)`,
        );
        for (const e of EVENTS) insert.run(...e);
        db.close();

        expect(migrateSqlite(file)).toContain(KEY_MIGRATION);
        const after = new Database(file);
        const rows = after.prepare(`SELECT * FROM "SessionEvent" ORDER BY "sessionId","seq"`).all();
        expect(rows).toEqual(
          EVENTS.map(([id, sessionId, seq, payload]) => expect.objectContaining({ id, sessionId, seq, payload })),
        );
        // The server's insert names no id; the previous version's still does.
        after.prepare(`INSERT INTO "SessionEvent" ("sessionId","seq","type","payload") VALUES ('s1',3,'x','{}')`).run();
        after
          .prepare(`INSERT INTO "SessionEvent" ("id","sessionId","seq","type","payload") VALUES ('e4','s1',4,'x','{}')`)
          .run();
        expect(() =>
          after
            .prepare(`INSERT INTO "SessionEvent" ("sessionId","seq","type","payload") VALUES ('s1',2,'x','{}')`)
            .run(),
        ).toThrow(/UNIQUE|PRIMARY/);
        // Deleting a session still takes its events with it.
        after.pragma("foreign_keys = ON");
        after.exec(`DELETE FROM "Session" WHERE "id" = 's1'`);
        expect(after.prepare(`SELECT count(*) AS n FROM "SessionEvent"`).get()).toEqual({ n: 1 });
        after.close();
      });
    await withPostgresBefore(KEY_MIGRATION, async (c, url) => {
      await c.query("SET session_replication_role = replica"); // the seed skips foreign keys
      for (const s of SEED) await c.query(s);
      for (const e of EVENTS)
        await c.query(
          `INSERT INTO "SessionEvent" ("id","sessionId","seq","type","payload") VALUES ($1,$2,$3,'x',$4)`,
          e,
        );
      await c.query("SET session_replication_role = DEFAULT");

      expect(await migratePostgres(url)).toContain(KEY_MIGRATION);
      const { rows } = await c.query(`SELECT * FROM "SessionEvent" ORDER BY "sessionId","seq"`);
      expect(rows).toEqual(
        EVENTS.map(([id, sessionId, seq, payload]) =>
          expect.objectContaining({ id, sessionId, seq, payload: JSON.parse(payload) }),
        ),
      );
      // A server of the previous version, still running during an upgrade, writes the id.
      await c.query(`INSERT INTO "SessionEvent" ("sessionId","seq","type","payload") VALUES ('s1',3,'x','{}')`);
      await c.query(
        `INSERT INTO "SessionEvent" ("id","sessionId","seq","type","payload") VALUES ('e4','s1',4,'x','{}')`,
      );
      await expect(
        c.query(`INSERT INTO "SessionEvent" ("sessionId","seq","type","payload") VALUES ('s1',2,'x','{}')`),
      ).rejects.toThrow(/duplicate key/);
      await c.query(`DELETE FROM "Session" WHERE "id" = 's1'`);
      expect((await c.query(`SELECT count(*)::int AS n FROM "SessionEvent"`)).rows).toEqual([{ n: 1 }]);
    });
  }, 60_000);
});
