// Test harness (tests only): a database as the previous version left it, for upgrade tests. Every
// committed migration before `name` is applied by hand and recorded as the server's migrator
// records it, so that the migrator applies `name` and the rest when it runs next.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { expect } from "vitest";
import { migrationsFor } from "../db/migrate";
import { createEmptyPostgres } from "./db";

/** The migrations up to (not including) `name`, which must exist and not be the first. */
export function migrationsBefore(provider: "sqlite" | "postgresql", name: string) {
  const all = migrationsFor(provider);
  const at = all.findIndex((m) => m.name === name);
  expect(at).toBeGreaterThan(0);
  return all.slice(0, at);
}

export function sqliteBefore(db: Database.Database, name: string): void {
  db.exec("CREATE TABLE _quiver_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
  for (const m of migrationsBefore("sqlite", name)) {
    db.exec(m.sql);
    db.prepare("INSERT INTO _quiver_migrations VALUES (?, ?)").run(m.name, new Date().toISOString());
  }
}

export async function postgresBefore(client: pg.Client, name: string): Promise<void> {
  await client.query("CREATE TABLE _quiver_migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)");
  for (const m of migrationsBefore("postgresql", name)) {
    await client.query(m.sql);
    await client.query("INSERT INTO _quiver_migrations VALUES ($1, now())", [m.name]);
  }
}

/** A new SQLite file (WAL, as the server makes it) migrated up to `name`; removed after `use`. */
export async function withSqliteBefore(
  name: string,
  use: (file: string, db: Database.Database) => Promise<void> | void,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "quiver-upgrade-"));
  try {
    const file = join(dir, "old.db");
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    sqliteBefore(db, name);
    await use(file, db);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A new PostgreSQL database migrated up to `name`, with a client on it; dropped after `use`. */
export async function withPostgresBefore(name: string, use: (client: pg.Client, url: string) => Promise<void>) {
  const empty = await createEmptyPostgres();
  const client = new pg.Client({ connectionString: empty.url });
  await client.connect();
  try {
    await postgresBefore(client, name);
    await use(client, empty.url);
  } finally {
    await client.end();
    await empty.drop();
  }
}
