// The Prisma client of this process: SQLite through better-sqlite3 by default, PostgreSQL
// through node-postgres when the URL says so. Both are generated from one schema and have the
// same model API, so the rest of the server sees one `Db` type.
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient as SqliteClient } from "./generated/sqlite/client";
import { PrismaClient as PostgresClient } from "./generated/postgresql/client";
import { migratePostgres, migrateSqlite, type DbProvider } from "./migrate";
import { providerOf } from "./driver";

export { providerOf };

export type Db = SqliteClient;
export type { DbProvider };

export interface DbHandle {
  db: Db;
  provider: DbProvider;
  /** Migration names applied by this open. */
  applied: string[];
  close(): Promise<void>;
}

/** `url`: a postgres URL, or `file:<path>` for SQLite. Migrates before returning. */
export async function openDb(url: string): Promise<DbHandle> {
  const provider = providerOf(url);
  if (provider === "postgresql") {
    const applied = await migratePostgres(url);
    const db = new PostgresClient({ adapter: new PrismaPg({ connectionString: url }) }) as unknown as Db;
    await db.$connect();
    return { db, provider, applied, close: () => db.$disconnect() };
  }
  const file = resolve(url.replace(/^file:/, ""));
  mkdirSync(dirname(file), { recursive: true });
  const applied = migrateSqlite(file);
  const db = new SqliteClient({ adapter: new PrismaBetterSQLite3({ url: `file:${file}`, timeout: 5000 }) });
  await db.$connect();
  return { db, provider, applied, close: () => db.$disconnect() };
}

export function defaultDbUrl(dataDir: string, databaseUrl?: string): string {
  return databaseUrl ?? `file:${resolve(dataDir, "quiver.db")}`;
}
