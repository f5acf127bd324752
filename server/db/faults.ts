// Database errors a person can act on. SQLite says "disk I/O error" for a read-only mount and
// Prisma wraps everything in "Invalid `prisma.x.y()` invocation…"; neither says which file or
// what to do. Every path that meets the database's errors (the query thread, the event writer
// thread, opening at start) passes them through `databaseFault`, which looks at the error and,
// for SQLite, at the data folder itself (free space, whether it can be written) and returns a
// DatabaseFault: what failed, where, and what to do. Errors that are not faults of the database
// as a whole (a unique constraint, a missing row) pass through unchanged.
// Light on purpose (no Prisma import): the worker threads load it.
import { accessSync, constants, statfsSync } from "node:fs";
import { dirname, resolve } from "node:path";

export type FaultKind = "disk_full" | "read_only" | "cannot_open" | "io" | "unreachable";

/** Name and code survive the copy between threads (query-thread.ts rebuilds errors by them). */
export const FAULT_NAME = "DatabaseFault";

export class DatabaseFault extends Error {
  override readonly name = FAULT_NAME;
  readonly code: string;
  constructor(
    readonly kind: FaultKind,
    message: string,
    /** The driver's own text, for the log. */
    readonly detail: string,
  ) {
    super(message);
    this.code = `DB_${kind.toUpperCase()}`;
  }
}

export function isDatabaseFault(err: unknown): err is Error & { code: string; detail?: string } {
  return (err as { name?: string } | undefined)?.name === FAULT_NAME;
}

/** Where the database is, as a person would look for it: the SQLite file, or host/database. */
export function databaseLocation(url: string): string {
  if (!/^postgres(ql)?:/.test(url)) return resolve(url.replace(/^file:/, ""));
  try {
    const u = new URL(url);
    return `PostgreSQL database ${u.pathname.replace(/^\//, "") || "(default)"} on ${u.hostname}${u.port ? `:${u.port}` : ""}`;
  } catch {
    return "the PostgreSQL database";
  }
}

const SQLITE = {
  full: /SQLITE_FULL|database or disk is full/i,
  readOnly: /SQLITE_READONLY|readonly database|read-only/i,
  cantOpen: /SQLITE_CANTOPEN|unable to open database file/i,
  io: /SQLITE_IOERR|disk I\/O error/i,
  // The folder itself, before SQLite is reached (creating the data folder at start).
  errno: /\b(EROFS|EACCES|EPERM|ENOSPC)\b/,
};

const TX_CLOSED = /\bP2028\b|Transaction API error/;

// PostgreSQL SQLSTATEs: 53100 disk_full, 25006 read_only_sql_transaction, 42501
// insufficient_privilege, class 08 connection exceptions, 57P01-03 shutdown / cannot connect now.
const PG_FULL = /^53100$/;
const PG_READ_ONLY = /^25006$/;
const PG_DENIED = /^42501$/;
const PG_DOWN = /^(08...|57P0[123])$/;

function textOf(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
  const cause = e?.cause as { code?: unknown; message?: unknown } | undefined;
  return (
    [e?.code, e?.message, cause?.code, cause?.message].filter((x) => typeof x === "string").join(" ") || String(err)
  );
}

function pgCode(err: unknown): string | undefined {
  const e = err as
    | {
        code?: unknown;
        cause?: { code?: unknown };
        meta?: { code?: unknown; driverAdapterError?: { cause?: { originalCode?: unknown } } };
      }
    | undefined;
  // Prisma's own codes (P2010: "raw query failed") have the same shape: not SQLSTATEs.
  for (const c of [e?.code, e?.cause?.code, e?.meta?.code, e?.meta?.driverAdapterError?.cause?.originalCode])
    if (typeof c === "string" && /^[0-9A-Z]{5}$/.test(c) && !/^P\d{4}$/.test(c)) return c;
  // Prisma's text: "Raw query failed. Code: `42501`. Message: …"
  const m = /\bcode\b[:=]?\s*[`"']?([0-9A-Z]{5})\b/i.exec(textOf(err));
  return m?.[1];
}

/** What the SQLite file's folder says: full, or not writable (a read-only mount, permissions). */
function folderState(file: string): "full" | "read_only" | undefined {
  const dir = dirname(file);
  try {
    accessSync(dir, constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EROFS" || code === "EACCES" || code === "EPERM") return "read_only";
  }
  try {
    const s = statfsSync(dir);
    // Less than two pages free: a write transaction cannot get its journal and page written.
    if (s.bavail * s.bsize < 8192) return "full";
  } catch {
    /* the folder is gone: cannot_open says so */
  }
  return undefined;
}

const DO = {
  disk_full: "Free space on that disk; the server goes on once it can write.",
  read_only: "Make it writable again (remount it read-write, or give the server's user write permission).",
  cannot_open: "Check that the folder exists and the server's user may write there (QUIVER_DATA_DIR, DATABASE_URL).",
  io: "Check the disk and the system log.",
  unreachable: "Check that the database server is running and reachable (DATABASE_URL).",
};

/** The fault `err` stands for, or undefined when it is an ordinary query error. */
export function databaseFault(err: unknown, url: string): DatabaseFault | undefined {
  if (isDatabaseFault(err)) return err as DatabaseFault;
  const text = textOf(err);
  const where = databaseLocation(url);
  const fault = (kind: FaultKind, what: string) => new DatabaseFault(kind, `${what} (${where}). ${DO[kind]}`, text);
  if (/^postgres(ql)?:/.test(url)) {
    const code = pgCode(err);
    if (code && PG_FULL.test(code))
      return fault("disk_full", "The database cannot be written: its server's disk is full");
    if (code && PG_READ_ONLY.test(code)) return fault("read_only", "The database is read-only: it refuses writes");
    if (code && PG_DENIED.test(code)) return fault("read_only", "The database refuses writes: permission denied");
    if (
      (code && PG_DOWN.test(code)) ||
      /ECONNREFUSED|ENOTFOUND|Connection terminated|Can't reach database server/i.test(text)
    ) {
      return fault("unreachable", "The database cannot be reached");
    }
    return undefined;
  }
  const file = resolve(url.replace(/^file:/, ""));
  // Prisma runs updateMany/deleteMany (and batches) in a transaction of its own; when SQLite
  // refuses the COMMIT it reports only its failed rollback ("Transaction API error: Transaction
  // already closed…", P2028), with no SQLite code. The folder says whether that was a fault.
  if (TX_CLOSED.test(text) && !Object.values(SQLITE).some((re) => re.test(text))) {
    const state = folderState(file);
    if (state === "full") return fault("disk_full", "The database cannot be written: the disk is full");
    if (state === "read_only")
      return fault("read_only", "The database is read-only: its file or folder cannot be written");
    return undefined;
  }
  const isSqlite = Object.values(SQLITE).some((re) => re.test(text));
  if (!isSqlite) return undefined;
  const state = folderState(file);
  if (SQLITE.full.test(text) || /\bENOSPC\b/.test(text) || state === "full")
    return fault("disk_full", "The database cannot be written: the disk is full");
  if (SQLITE.readOnly.test(text) || /\b(EROFS|EACCES|EPERM)\b/.test(text) || state === "read_only")
    return fault("read_only", "The database is read-only: its file or folder cannot be written");
  if (SQLITE.cantOpen.test(text)) return fault("cannot_open", "The database file cannot be opened");
  return fault("io", "The database cannot be written: the disk reported an I/O error");
}

/** `err` as its fault when it is one, else unchanged: for paths that rethrow. */
export const withFault = (err: unknown, url: string): unknown => databaseFault(err, url) ?? err;
