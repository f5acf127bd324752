// Applies the committed SQL migrations of prisma/migrations/<provider>/ in order, once each.
// Prisma's own `migrate deploy` needs native engines or trips on an adapter-pg bug
// (prisma/orm#27403: "Column type 'name' could not be deserialized"), and the server must migrate on every start without a CLI, so this is ours.
import { readFileSync, readdirSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { loadPg } from "./driver";

export type DbProvider = "sqlite" | "postgresql";
const migrationsRoot = resolve(import.meta.dirname, "../../prisma/migrations");

export interface Migration {
  name: string;
  sql: string;
}

export function migrationsFor(provider: DbProvider): Migration[] {
  const dir = join(migrationsRoot, provider);
  return readdirSync(dir)
    .filter((name) => existsSync(join(dir, name, "migration.sql")))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name, "migration.sql"), "utf8") }));
}

/** Returns the names of the migrations it applied. */
export function migrateSqlite(file: string): string[] {
  const db = new Database(file);
  try {
    // WAL lets the server read while a turn writes; the setting persists in the file.
    db.pragma("journal_mode = WAL");
    db.pragma("busy_timeout = 5000");
    db.exec("CREATE TABLE IF NOT EXISTS _quiver_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)");
    const done = new Set(db.prepare("SELECT name FROM _quiver_migrations").pluck().all() as string[]);
    const applied: string[] = [];
    for (const m of migrationsFor("sqlite")) {
      if (done.has(m.name)) continue;
      db.transaction(() => {
        db.exec(m.sql);
        db.prepare("INSERT INTO _quiver_migrations (name, applied_at) VALUES (?, ?)").run(
          m.name,
          new Date().toISOString(),
        );
      }).immediate();
      applied.push(m.name);
    }
    return applied;
  } finally {
    db.close();
  }
}

/** Several servers may start at once against one database: an advisory lock serialises them. */
export async function migratePostgres(connectionString: string): Promise<string[]> {
  const client = new (loadPg().Client)({ connectionString });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock(7326541)");
    await client.query(
      "CREATE TABLE IF NOT EXISTS _quiver_migrations (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)",
    );
    const { rows } = await client.query<{ name: string }>("SELECT name FROM _quiver_migrations");
    const done = new Set(rows.map((r) => r.name));
    const applied: string[] = [];
    for (const m of migrationsFor("postgresql")) {
      if (done.has(m.name)) continue;
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await client.query("INSERT INTO _quiver_migrations (name, applied_at) VALUES ($1, now())", [m.name]);
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`);
      }
      applied.push(m.name);
    }
    return applied;
  } finally {
    await client.query("SELECT pg_advisory_unlock(7326541)").catch(() => {});
    await client.end();
  }
}
