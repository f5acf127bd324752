// Test databases: a fresh SQLite file per call, and a fresh PostgreSQL database per call when
// the local server (or TEST_DATABASE_URL) answers. Integration suites run once per provider:
//   describe.each(testDatabases())("sessions on %s", (provider) => { const t = useTestDb(provider) ... })
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { openDirectDb as openDb, type DbHandle, type DbProvider, type DirectDb } from "../db";

const adminUrl = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

let postgresReachable: boolean | undefined;
/** Checked synchronously once so describe.each can list the providers at collection time. */
export function testDatabases(): DbProvider[] {
  if (postgresReachable === undefined) {
    try {
      execFileSync(process.execPath, ["-e", probeScript, adminUrl], { timeout: 5000, stdio: "ignore" });
      postgresReachable = true;
    } catch {
      postgresReachable = false;
      if (process.env.CI) throw new Error(`PostgreSQL is not reachable at ${adminUrl}; CI must test both databases`);
    }
  }
  return postgresReachable ? ["sqlite", "postgresql"] : ["sqlite"];
}

const probeScript = `const pg=require(${JSON.stringify(createRequire(import.meta.url).resolve("pg"))});const c=new pg.Client({connectionString:process.argv[1]});c.connect().then(()=>c.end()).then(()=>process.exit(0),()=>process.exit(1))`;

/** A direct client (no query thread), as a tool or a test opens one: interactive transactions too. */
export interface TestDb extends Omit<DbHandle, "db"> {
  db: DirectDb;
  url: string;
}

/** A migrated, empty database; dropped when `dispose` runs. */
export async function createTestDb(provider: DbProvider): Promise<TestDb & { dispose(): Promise<void> }> {
  if (provider === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "quiver-db-"));
    const url = `file:${join(dir, "test.db")}`;
    const handle = await openDb(url);
    return {
      ...handle,
      url,
      dispose: async () => {
        await handle.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const empty = await createEmptyPostgres();
  const handle = await openDb(empty.url);
  return {
    ...handle,
    url: empty.url,
    dispose: async () => {
      await handle.close();
      await empty.drop();
    },
  };
}

/** A new PostgreSQL database with nothing in it, not even the migrations; `drop` removes it. */
export async function createEmptyPostgres(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `quiver_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Vitest helper: one database for the enclosing describe block. */
export function useTestDb(provider: DbProvider): { readonly current: TestDb } {
  let db: (TestDb & { dispose(): Promise<void> }) | undefined;
  beforeAll(async () => {
    db = await createTestDb(provider);
  }, 60_000);
  afterAll(async () => {
    await db?.dispose();
  });
  return {
    get current() {
      if (!db) throw new Error("test database not ready (use inside tests)");
      return db;
    },
  };
}
