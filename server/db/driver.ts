// Direct driver connections beside Prisma, for the paths where Prisma's per-query cost is too
// high (spill bytes, the hub's event rows). Light on purpose: a worker thread imports it
// without loading the Prisma clients. There is one better-sqlite3 in the install, the copy
// Prisma's adapter loads (server/db/one-sqlite.test.ts): two SQLite libraries writing one
// file in one process corrupt it.
import { createRequire } from "node:module";
import { resolve } from "node:path";
import Database from "better-sqlite3";
import type pg from "pg";
import type { DbProvider } from "./migrate";
import { pgValue } from "./storable";

// node-postgres is loaded on first use, not with this module: a SQLite server never needs it,
// and loading it took both threads of a start (main, query thread) some 50-150 ms of CPU each.
const requireHere = createRequire(import.meta.url);
export const loadPg = (): typeof pg => requireHere("pg") as typeof pg;

export function providerOf(url: string): DbProvider {
  return /^postgres(ql)?:/.test(url) ? "postgresql" : "sqlite";
}

/** The SQLite file of a `file:` URL, opened to wait out a writer rather than fail at once.
 *  `wait: false` for a connection that shares its thread with a Prisma client: see whenFree. */
export function openSqlite(url: string, options: { wait?: boolean } = {}): Database.Database {
  const ms = options.wait === false ? 0 : 5000;
  const db = new Database(resolve(url.replace(/^file:/, "")), { timeout: ms });
  db.pragma(`busy_timeout = ${ms}`);
  return db;
}

/** Runs `work` (statements of a connection opened with `wait: false`), retrying while another
 *  connection holds the write lock, for up to `limitMs`. SQLite's own wait blocks the thread; on
 *  a thread that also runs a Prisma client whose transaction holds the lock across awaits, that
 *  transaction could then never commit, and both waited out the whole timeout. This wait yields. */
export async function whenFree<T>(work: () => T, limitMs = 5000): Promise<T> {
  const start = Date.now();
  for (let pause = 1; ; pause = Math.min(pause * 2, 25)) {
    try {
      return work();
    } catch (err) {
      if ((err as { code?: string }).code !== "SQLITE_BUSY" || Date.now() - start >= limitMs) throw err;
    }
    await new Promise((r) => setTimeout(r, pause));
  }
}

/** A pool whose dropped idle connections (server restart, admin) do not crash the process:
 *  the next query reconnects. A string parameter's NUL, which no PostgreSQL text column holds,
 *  goes as ␀ (storable.ts): a model's or a person's text is stored, not the statement refused. */
export function openPgPool(url: string, max: number): pg.Pool {
  const pool = new (loadPg().Pool)({ connectionString: url, max });
  pool.on("error", () => undefined);
  // Every query of the pool, pool.query included, runs on one of its clients.
  pool.on("connect", (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (first: unknown, values?: unknown, ...rest: unknown[]) =>
      Array.isArray(values) ? query(first, values.map(pgValue), ...rest) : query(first, values, ...rest);
  });
  return pool;
}

/** The text form Prisma's SQLite adapter writes for DateTime, so its filters compare correctly. */
export const sqliteDate = (d: Date | string) => (typeof d === "string" ? d : d.toISOString()).replace("Z", "+00:00");
