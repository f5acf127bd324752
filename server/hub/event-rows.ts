// SessionEvent rows written through the database driver Prisma itself sits on (better-sqlite3,
// node-postgres), as the spill byte path does: Prisma 6.19 compiles every query in WebAssembly
// on the calling thread, several times the CPU of the INSERT itself (bench/token-latency).
// Same table, same column forms Prisma writes and reads: SQLite keeps DateTime as ISO text with
// +00:00 and Json as text; PostgreSQL's createdAt is timestamp(3) holding UTC.
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import type { SessionEvent } from "../protocol/events";

export interface EventRows {
  /** One transaction: all of the events or none. */
  insert(events: SessionEvent[]): Promise<void>;
  close(): Promise<void>;
}

// Row ids that grow with time (milliseconds, a counter, then this thread's random tag): new rows
// land at the right edge of the primary-key index instead of on a random page each, which
// cuts SQLite's work per row by about 40% (random UUIDs dirtied one index page per row).
const tag = randomBytes(5).toString("hex");
let counter = 0;
function eventId(): string {
  counter = (counter + 1) % 1_679_616;
  return `${Date.now().toString(36).padStart(9, "0")}${counter.toString(36).padStart(4, "0")}${tag}`;
}

/** The stored payload is the event without the fields that have columns of their own. */
function payload(ev: SessionEvent): string {
  const { seq: _seq, sessionId: _sessionId, at: _at, ...body } = ev;
  return JSON.stringify(body);
}

// The copy of better-sqlite3 that Prisma's adapter loads: two SQLite libraries in one process
// do not see each other's POSIX locks, and writing one file through both corrupts it
// ("database disk image is malformed", seen in bench/token-latency while an older install had
// two). package.json pins one version (server/db/one-sqlite.test.ts); this keeps it so if the
// install ever holds two again.
function prismasSqlite(): typeof BetterSqlite3 {
  const require = createRequire(import.meta.url);
  return createRequire(require.resolve("@prisma/adapter-better-sqlite3"))("better-sqlite3") as typeof BetterSqlite3;
}

export function sqliteEventRows(url: string): EventRows {
  const Database = prismasSqlite();
  const db = new Database(resolve(url.replace(/^file:/, "")), { timeout: 5000 });
  db.pragma("busy_timeout = 5000");
  const one = db.prepare(`INSERT INTO "SessionEvent" ("id","sessionId","seq","type","payload","createdAt") VALUES (?,?,?,?,?,?)`);
  const all = db.transaction((events: SessionEvent[]) => {
    for (const ev of events) one.run(eventId(), ev.sessionId, ev.seq, ev.type, payload(ev), ev.at.replace("Z", "+00:00"));
  });
  return {
    insert: async (events) => void all(events),
    close: async () => void db.close(),
  };
}

export function postgresEventRows(url: string): EventRows {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  // A dropped idle connection must not take the process down; the next write reconnects.
  pool.on("error", () => undefined);
  return {
    async insert(events) {
      const params: unknown[] = [];
      const values = events.map((ev) => {
        const b = params.length;
        params.push(eventId(), ev.sessionId, ev.seq, ev.type, payload(ev), ev.at);
        // timestamp(3) ignores the zone of the ISO text: the UTC time is stored, as Prisma does.
        return `($${b + 1},$${b + 2},$${b + 3},$${b + 4},$${b + 5}::jsonb,$${b + 6}::timestamp(3))`;
      });
      await pool.query(`INSERT INTO "SessionEvent" ("id","sessionId","seq","type","payload","createdAt") VALUES ${values.join(",")}`, params);
    },
    close: () => pool.end(),
  };
}

export const isPostgresUrl = (url: string) => /^postgres(ql)?:/.test(url);
