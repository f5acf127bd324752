// Direct driver connections beside Prisma, for the paths where Prisma's per-query cost is too
// high (spill bytes, the hub's event rows). Light on purpose: a worker thread imports it
// without loading the Prisma clients. There is one better-sqlite3 in the install, the copy
// Prisma's adapter loads (server/db/one-sqlite.test.ts): two SQLite libraries writing one
// file in one process corrupt it.
import { resolve } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import type { DbProvider } from "./migrate";

export function providerOf(url: string): DbProvider {
  return /^postgres(ql)?:/.test(url) ? "postgresql" : "sqlite";
}

/** The SQLite file of a `file:` URL, opened to wait out a writer rather than fail at once. */
export function openSqlite(url: string): Database.Database {
  const db = new Database(resolve(url.replace(/^file:/, "")), { timeout: 5000 });
  db.pragma("busy_timeout = 5000");
  return db;
}

/** A pool whose dropped idle connections (server restart, admin) do not crash the process:
 *  the next query reconnects. */
export function openPgPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on("error", () => undefined);
  return pool;
}

/** The text form Prisma's SQLite adapter writes for DateTime, so its filters compare correctly. */
export const sqliteDate = (d: Date | string) => (typeof d === "string" ? d : d.toISOString()).replace("Z", "+00:00");
