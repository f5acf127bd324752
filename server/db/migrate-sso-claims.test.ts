// Upgrading to SSO domains proven by DNS: every domain an org saved before, never proven, becomes a
// claim of that org (lower case, once each), and none stays in the list sign-in reads, on both
// databases, through the server's own migrator after the earlier migrations were applied by hand.
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { testDatabases } from "../testing/db";
import { migratePostgres, migrateSqlite } from "./migrate";
import { withPostgresBefore, withSqliteBefore } from "../testing/migrated-before";

const CLAIMS_MIGRATION = "20261206190755_sso_domain_claims";

const PROVIDERS: [string, string, string | null, string][] = [
  ["p1", "org-o1", "o1", "a.test,B.test, a.test"],
  ["p2", "org-o2", "o2", "c.test"],
  ["p3", "org-x", null, "orphan.test"],
];
const EXPECTED = [
  ["o1", "a.test"],
  ["o1", "b.test"],
  ["o2", "c.test"],
];
const INSERT = `INSERT INTO "SsoProvider" ("id","providerId","organizationId","domain","issuer","userId") VALUES`;

describe.each(testDatabases())("upgrading a %s database to SSO domain claims", (provider) => {
  it("turns each saved domain into its org's claim and leaves none proven", async () => {
    if (provider === "sqlite")
      return withSqliteBefore(CLAIMS_MIGRATION, (file, db) => {
        const insert = db.prepare(`${INSERT} (?,?,?,?,'https://idp.test','u')`);
        for (const p of PROVIDERS) insert.run(...p);
        db.close();

        expect(migrateSqlite(file)).toContain(CLAIMS_MIGRATION);
        const after = new Database(file);
        const claims = after
          .prepare(`SELECT "organizationId", "domain" FROM "SsoDomainClaim" ORDER BY 1, 2`)
          .all()
          .map((r) => Object.values(r as object));
        expect(claims).toEqual(EXPECTED);
        expect(after.prepare(`SELECT DISTINCT "domain" FROM "SsoProvider"`).all()).toEqual([{ domain: "" }]);
        expect(after.prepare(`SELECT count(*) AS n FROM "SsoVerifiedDomain"`).get()).toEqual({ n: 0 });
        after.close();
      });
    await withPostgresBefore(CLAIMS_MIGRATION, async (c, url) => {
      for (const p of PROVIDERS) await c.query(`${INSERT} ($1,$2,$3,$4,'https://idp.test','u')`, p);

      expect(await migratePostgres(url)).toContain(CLAIMS_MIGRATION);
      const claims = await c.query(`SELECT "organizationId", "domain" FROM "SsoDomainClaim" ORDER BY 1, 2`);
      expect(claims.rows.map((r) => Object.values(r))).toEqual(EXPECTED);
      expect((await c.query(`SELECT DISTINCT "domain" FROM "SsoProvider"`)).rows).toEqual([{ domain: "" }]);
      expect((await c.query(`SELECT count(*)::int AS n FROM "SsoVerifiedDomain"`)).rows).toEqual([{ n: 0 }]);
    });
  }, 60_000);
});
