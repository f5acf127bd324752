// The Prisma client of this process: SQLite through better-sqlite3 by default, PostgreSQL
// through node-postgres when the URL says so. Both are generated from one schema and have the
// same model API, so the rest of the server sees one `Db` type.
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type * as runtime from "@prisma/client/runtime/client";
import type { Prisma, PrismaClient as SqliteClient } from "./generated/sqlite/client";
import { migratePostgres, migrateSqlite, type DbProvider } from "./migrate";
import { providerOf } from "./driver";
import { withFault } from "./faults";
import { startQueryThread } from "./query-thread";
import { SqliteAdapterFactory } from "./sqlite-adapter";
import { turnRowsFor, type BeginImage, type TurnRows } from "./turn-rows";
import { callRowsHere } from "./turn-rows/calls-here";

export { providerOf };

/**
 * The server's client (the query thread's, query-thread.ts): the model API and batched
 * `$transaction([…])`, not interactive transactions, which need a client in this thread
 * (`DirectDb`, from connectDb). A test's direct client would otherwise accept what fails in
 * the server.
 */
export type Db = Omit<SqliteClient, "$transaction"> & {
  // Prisma's own batch overload, so a direct client still is a Db.
  $transaction<P extends Prisma.PrismaPromise<any>[]>(
    arg: [...P],
    options?: { isolationLevel?: Prisma.TransactionIsolationLevel },
  ): runtime.Types.Utils.JsPromise<runtime.Types.Utils.UnwrapTuple<P>>;
};
/** A client in this thread (connectDb): interactive transactions too. */
export type DirectDb = SqliteClient;
export type { BeginImage, DbProvider, TurnRows };

export interface DbHandle {
  db: Db;
  /** A model turn's hot-path rows, through the driver (turn-rows/); with `thread`, on the
   *  query thread but for a tool call's rows (turn-rows/calls-here.ts). */
  rows: TurnRows;
  provider: DbProvider;
  /** Migration names applied by this open. */
  applied: string[];
  close(): Promise<void>;
}

export interface OpenDbOptions {
  /** Run the queries on a worker thread (query-thread.ts): what the server does, so that
   *  Prisma's per-query compiling never holds up the thread that relays tokens. */
  thread?: boolean;
}

/** `url`: a postgres URL, or `file:<path>` for SQLite. Migrates before returning. A database
 *  that cannot be opened or written fails with a DatabaseFault naming where and what to do. */
export async function openDb(url: string, options: OpenDbOptions = {}): Promise<DbHandle> {
  try {
    return await open(url, options);
  } catch (err) {
    throw withFault(err, url);
  }
}

/** `openDb` without the query thread: its client runs interactive transactions too (tests, tools). */
export async function openDirectDb(url: string): Promise<Omit<DbHandle, "db"> & { db: DirectDb }> {
  return (await openDb(url)) as Omit<DbHandle, "db"> & { db: DirectDb };
}

async function open(url: string, options: OpenDbOptions): Promise<DbHandle> {
  const provider = providerOf(url);
  let applied: string[];
  if (provider === "postgresql") applied = await migratePostgres(url);
  else {
    const file = sqliteFile(url);
    mkdirSync(dirname(file), { recursive: true });
    applied = migrateSqlite(file);
  }
  if (options.thread) {
    const queries = startQueryThread(url);
    // A tool call's rows stay in this thread (calls-here.ts says why).
    const calls = callRowsHere(url);
    const { close: closeCalls, ...callOps } = calls;
    return {
      db: queries.db,
      rows: { ...queries.rows, ...callOps },
      provider,
      applied,
      close: async () => void (await Promise.all([queries.close(), closeCalls()])),
    };
  }
  const db = await connectDb(url);
  const rows = turnRowsFor(url);
  return { db, rows, provider, applied, close: async () => void (await Promise.all([db.$disconnect(), rows.close()])) };
}

/** A client for a database `openDb` has already migrated (a second client, in a worker thread). */
export async function connectDb(url: string): Promise<DirectDb> {
  const db = providerOf(url) === "postgresql" ? await postgresClient(url) : await sqliteClient(url);
  await db.$connect();
  return db;
}

/** Loaded on first use: a server runs its queries on the query thread (query-thread.ts), so its
 *  main thread loads Prisma only if it needs a client of its own (an org change). */
async function sqliteClient(url: string): Promise<DirectDb> {
  const { PrismaClient } = await import("./generated/sqlite/client");
  return new PrismaClient({ adapter: new SqliteAdapterFactory({ url: `file:${sqliteFile(url)}`, timeout: 5000 }) });
}

/** Loaded only for a PostgreSQL URL: its client and adapter are a good part of a SQLite server's start. */
async function postgresClient(url: string): Promise<DirectDb> {
  const [{ PrismaClient }, { PrismaPg }] = await Promise.all([
    import("./generated/postgresql/client"),
    import("@prisma/adapter-pg"),
  ]);
  const { storableQuery } = await import("./storable-query");
  const client = new PrismaClient({ adapter: new PrismaPg({ connectionString: url }) });
  return client.$extends({ query: { $allOperations: storableQuery } }) as unknown as DirectDb;
}

const sqliteFile = (url: string) => resolve(url.replace(/^file:/, ""));

export function defaultDbUrl(dataDir: string, databaseUrl?: string): string {
  return databaseUrl ?? `file:${resolve(dataDir, "quiver.db")}`;
}
