// SessionEvent rows written through the database driver Prisma itself sits on (better-sqlite3,
// node-postgres), as the spill byte path does: Prisma 6.19 compiles every query in WebAssembly
// on the calling thread, several times the CPU of the INSERT itself (bench/token-latency).
// Same table, same column forms Prisma writes and reads: SQLite keeps DateTime as ISO text with
// +00:00 and Json as text; PostgreSQL's createdAt is timestamp(3) holding UTC.
import { openPgPool, openSqlite, sqliteDate } from "../db/driver";
import { rowId } from "../db/row-id";
import type { SessionEvent } from "../protocol/events";
import { EVENTS_CHANNEL, eventPayloads } from "../protocol/broker";
import { expandRuns, type DeltaRun } from "./delta-run";

export interface EventRows {
  /** One transaction: all of the events or none, a row each (a run of deltas: a row per delta).
   *  With `notifyFrom` (PostgreSQL) the same transaction NOTIFYs them to the other server
   *  instances (hub/cluster.ts), delivered on commit. */
  insert(events: ReadonlyArray<SessionEvent | DeltaRun>, notifyFrom?: string): Promise<void>;
  /** NOTIFY on the writer's own connection, so it commits after every insert sent before it. */
  notify?(channel: string, payloads: string[]): Promise<void>;
  close(): Promise<void>;
}

/** The stored payload is the event without the fields that have columns of their own. */
function payload(ev: SessionEvent): string {
  const { seq: _seq, sessionId: _sessionId, at: _at, ...body } = ev;
  return JSON.stringify(body);
}

export function sqliteEventRows(url: string): EventRows {
  const db = openSqlite(url);
  const one = db.prepare(
    `INSERT INTO "SessionEvent" ("id","sessionId","seq","type","payload","createdAt") VALUES (?,?,?,?,?,?)`,
  );
  const all = db.transaction((events: SessionEvent[]) => {
    for (const ev of events) one.run(rowId(), ev.sessionId, ev.seq, ev.type, payload(ev), sqliteDate(ev.at));
  });
  return {
    insert: async (events) => void all(expandRuns(events)),
    close: async () => void db.close(),
  };
}

export function postgresEventRows(url: string): EventRows {
  const pool = openPgPool(url, 1);
  return {
    async insert(items, notifyFrom) {
      const events = expandRuns(items);
      const params: unknown[] = [];
      const values = events.map((ev) => {
        const b = params.length;
        params.push(rowId(), ev.sessionId, ev.seq, ev.type, payload(ev), ev.at);
        // timestamp(3) ignores the zone of the ISO text: the UTC time is stored, as Prisma does.
        return `($${b + 1},$${b + 2},$${b + 3},$${b + 4},$${b + 5}::jsonb,$${b + 6}::timestamp(3))`;
      });
      const insert = `INSERT INTO "SessionEvent" ("id","sessionId","seq","type","payload","createdAt") VALUES ${values.join(",")}`;
      if (!notifyFrom) return void (await pool.query(insert, params));
      // One statement, so still one round trip: the rows and their notifications commit together.
      params.push(EVENTS_CHANNEL, eventPayloads(notifyFrom, events));
      const n = params.length;
      await pool.query(
        `WITH ins AS (${insert}) SELECT pg_notify($${n - 1}, p) FROM unnest($${n}::text[]) AS p`,
        params,
      );
    },
    async notify(channel, payloads) {
      await pool.query(`SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, [channel, payloads]);
    },
    close: () => pool.end(),
  };
}
