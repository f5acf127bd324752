// SessionEvent rows written through the database driver Prisma itself sits on (better-sqlite3,
// node-postgres), as the spill byte path does: Prisma 6.19 compiles every query in WebAssembly
// on the calling thread, several times the CPU of the INSERT itself (bench/token-latency).
// Same table, same column forms Prisma writes and reads: SQLite keeps DateTime as ISO text with
// +00:00 and Json as text; PostgreSQL's createdAt is timestamp(3) holding UTC.
import { openPgPool, openSqlite, sqliteDate } from "../db/driver";
import { jsonbText } from "../db/storable";
import type { SessionEvent } from "../protocol/events";
import { EVENTS_CHANNEL, eventPayloads } from "../protocol/broker";
import { eachDelta, expandRuns, isRun, type DeltaRun } from "./delta-run";

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

type Row = (sessionId: string, seq: number, type: string, payload: string, at: string) => void;

/** Each row of an insert in order: an event's, or one per delta of a run, whose payload is the
 *  JSON its expanded event's would be (type, turnId, text: the engine's key order) without an
 *  event object per token on the writer thread. */
function eachRow(items: ReadonlyArray<SessionEvent | DeltaRun>, row: Row): void {
  for (const item of items) {
    if (!isRun(item)) {
      row(item.sessionId, item.seq, item.type, payload(item), item.at);
      continue;
    }
    const head = `{"type":${JSON.stringify(item.type)},"turnId":${JSON.stringify(item.turnId)},"text":`;
    eachDelta(item, (seq, text, at) => row(item.sessionId, seq, item.type, `${head}${JSON.stringify(text)}}`, at));
  }
}

export function sqliteEventRows(url: string): EventRows {
  const db = openSqlite(url);
  const one = db.prepare(
    `INSERT INTO "SessionEvent" ("sessionId","seq","type","payload","createdAt") VALUES (?,?,?,?,?)`,
  );
  // A run's deltas share a time for many rows: its SQLite text is made once per time.
  let lastAt = "";
  let lastDate = "";
  const row: Row = (sessionId, seq, type, payload, at) => {
    if (at !== lastAt) [lastAt, lastDate] = [at, sqliteDate(at)];
    one.run(sessionId, seq, type, payload, lastDate);
  };
  const all = db.transaction((items: ReadonlyArray<SessionEvent | DeltaRun>) => eachRow(items, row));
  return {
    insert: async (items) => void all(items),
    close: async () => void db.close(),
  };
}

export function postgresEventRows(url: string): EventRows {
  const pool = openPgPool(url, 1);
  return {
    async insert(items, notifyFrom) {
      const params: unknown[] = [];
      const values: string[] = [];
      eachRow(items, (sessionId, seq, type, payload, at) => {
        const b = params.length;
        params.push(sessionId, seq, type, jsonbText(payload), at);
        // timestamp(3) ignores the zone of the ISO text: the UTC time is stored, as Prisma does.
        values.push(`($${b + 1},$${b + 2},$${b + 3},$${b + 4}::jsonb,$${b + 5}::timestamp(3))`);
      });
      const insert = `INSERT INTO "SessionEvent" ("sessionId","seq","type","payload","createdAt") VALUES ${values.join(",")}`;
      if (!notifyFrom) return void (await pool.query(insert, params));
      // One statement, so still one round trip: the rows and their notifications commit together.
      params.push(EVENTS_CHANNEL, eventPayloads(notifyFrom, expandRuns(items)));
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
