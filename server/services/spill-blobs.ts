// The byte path of spills: inserts and slice reads of Spill.bytes and SpillChunk.bytes through the
// database driver Prisma itself sits on (better-sqlite3, node-postgres), on the same tables and
// schema. Why: Prisma 6.19's driver adapters serialise Bytes values at a few MB/s (a 10 MB spill
// took 2-10 s through create or $executeRaw), far from the 100 ms a cut result may cost. A spill's
// bytes are its own `bytes` (offset 0) followed by its chunks in offset order; a chunk is at most
// SPILL_CHUNK bytes, so a slice read touches at most the chunks it overlaps plus one. Metadata
// queries and clean-up stay in Prisma (chunks go with their spill by the foreign key's cascade).
//
// A session's spills hold at most `limit` bytes (spills.ts): every write of bytes checks what the
// session holds and writes in one step that no other write of that session, in this process or
// another server sharing the database, can slip between. A count read then a separate write
// could be raced (two streams of one session, two instances), each seeing room for itself. On
// SQLite the step is one IMMEDIATE transaction: it takes the database's write lock before it
// reads, and SQLite has one writer at a time across processes. On PostgreSQL it is a transaction
// that first takes a transaction-scoped advisory lock on the session (pg_advisory_xact_lock), so
// the session's writes queue on one another and nothing else waits; READ COMMITTED lets the sum
// read after the lock see every write committed before it. The bytes held are summed from the
// blobs' lengths (length() reads a value's header, not its bytes, on both databases), spills not
// yet deleted included: they are on disk until then.
import type pg from "pg";
import { openPgPool, openSqlite, providerOf, sqliteDate } from "../db/driver";

export const SPILL_CHUNK = 1024 * 1024;

export interface SpillRow {
  id: string;
  sessionId: string;
  toolCallId: string | null;
  bytes: Uint8Array;
  size: number;
  sha256: string;
  createdAt: Date;
  expiresAt: Date;
}

/** Written, or refused because the session's spills would then hold more than the limit (`held`: what they hold). */
export type Bounded = { ok: true } | { ok: false; held: number };

export interface BlobChannel {
  /** Inserts the row unless the session's spills would then hold more than `limit` bytes. */
  insert(row: SpillRow, limit?: number): Promise<Bounded>;
  /** Appends the piece at `offset` of a spill whose row exists (pieces of at most SPILL_CHUNK bytes),
   *  unless the session's spills would then hold more than `limit` bytes. */
  appendChunk(id: string, sessionId: string, offset: number, bytes: Uint8Array, limit?: number): Promise<Bounded>;
  /** Records the final size and digest of a streamed spill. */
  seal(id: string, size: number, sha256: string): Promise<void>;
  /** Bytes [from, from + length) of a spill (clamped), regardless of expiry. */
  slice(id: string, from: number, length: number): Promise<Uint8Array>;
  /** The spill's bytes in order, one stored piece at a time. */
  pieces(id: string): AsyncGenerator<Uint8Array>;
  close(): Promise<void>;
}

const buf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

// The session's bytes: its spills' own bytes and their chunks'. Its spills are found by their
// sessionId index and read to their first page only (length() needs no overflow page); the
// chunks are found by their primary key (spillId, offset).
const HELD_SQL = (p: [string, string]) =>
  `SELECT COALESCE((SELECT SUM(length("bytes")) FROM "Spill" WHERE "sessionId" = ${p[0]}), 0) + ` +
  `COALESCE((SELECT SUM(length(c."bytes")) FROM "SpillChunk" c JOIN "Spill" s ON s."id" = c."spillId" WHERE s."sessionId" = ${p[1]}), 0) AS held`;

/** Joins the parts of [from, end) found in `rows` (each at its offset). */
function assemble(rows: { offset: number; bytes: Uint8Array }[], from: number, end: number): Uint8Array {
  const parts: Buffer[] = [];
  for (const r of rows) {
    const s = Math.max(from, r.offset);
    const e = Math.min(end, r.offset + r.bytes.length);
    if (e > s) parts.push(buf(r.bytes).subarray(s - r.offset, e - r.offset));
  }
  return new Uint8Array(Buffer.concat(parts));
}

function sqliteChannel(url: string): BlobChannel {
  const db = openSqlite(url);
  const insert = db.prepare(
    `INSERT INTO "Spill" ("id","sessionId","toolCallId","bytes","size","sha256","createdAt","expiresAt") VALUES (?,?,?,?,?,?,?,?)`,
  );
  const own = db.prepare(`SELECT substr("bytes", ?, ?) AS chunk FROM "Spill" WHERE "id" = ?`).pluck();
  const ownAll = db.prepare(`SELECT "bytes" FROM "Spill" WHERE "id" = ?`).pluck();
  const append = db.prepare(`INSERT INTO "SpillChunk" ("spillId","offset","bytes") VALUES (?,?,?)`);
  const heldBy = db.prepare(HELD_SQL(["?", "?"])).pluck();
  const heldNow = (sessionId: string) => Number(heldBy.get(sessionId, sessionId) ?? 0);
  /** Runs `write` when `bytes` more fit under `limit`, in one IMMEDIATE transaction (see the header). */
  const within = (sessionId: string, bytes: number, limit: number, write: () => void): Bounded => {
    if (!Number.isFinite(limit)) {
      write();
      return { ok: true };
    }
    return db
      .transaction((): Bounded => {
        const held = heldNow(sessionId);
        if (held + bytes > limit) return { ok: false, held };
        write();
        return { ok: true };
      })
      .immediate();
  };
  const seal = db.prepare(`UPDATE "Spill" SET "size" = ?, "sha256" = ? WHERE "id" = ?`);
  const overlapping = db.prepare(
    `SELECT "offset", "bytes" FROM "SpillChunk" WHERE "spillId" = ? AND "offset" > ? AND "offset" < ? ORDER BY "offset"`,
  );
  const after = db.prepare(
    `SELECT "offset", "bytes" FROM "SpillChunk" WHERE "spillId" = ? AND "offset" > ? ORDER BY "offset" LIMIT 1`,
  );
  return {
    async insert(r, limit = Infinity) {
      return within(r.sessionId, r.bytes.byteLength, limit, () =>
        insert.run(
          r.id,
          r.sessionId,
          r.toolCallId,
          buf(r.bytes),
          r.size,
          r.sha256,
          sqliteDate(r.createdAt),
          sqliteDate(r.expiresAt),
        ),
      );
    },
    async appendChunk(id, sessionId, offset, bytes, limit = Infinity) {
      return within(sessionId, bytes.byteLength, limit, () => append.run(id, offset, buf(bytes)));
    },
    async seal(id, size, sha256) {
      seal.run(size, sha256, id);
    },
    async slice(id, from, length) {
      const head = (own.get(from + 1, length, id) as Buffer | undefined) ?? Buffer.alloc(0);
      const rows = overlapping.all(id, from - SPILL_CHUNK, from + length) as { offset: number; bytes: Buffer }[];
      if (rows.length === 0) return new Uint8Array(head);
      return new Uint8Array(Buffer.concat([head, assemble(rows, from, from + length)]));
    },
    async *pieces(id) {
      const first = ownAll.get(id) as Buffer | undefined;
      if (first === undefined) return;
      if (first.length > 0) yield new Uint8Array(first);
      for (let at = -1; ;) {
        const row = after.get(id, at) as { offset: number; bytes: Buffer } | undefined;
        if (!row) return;
        at = row.offset;
        yield new Uint8Array(row.bytes);
      }
    },
    async close() {
      db.close();
    },
  };
}

function postgresChannel(url: string): BlobChannel {
  const pool = openPgPool(url, 4);
  const heldSql = HELD_SQL(["$1", "$1"]);
  const heldBy = async (q: Pick<pg.PoolClient, "query">, sessionId: string) =>
    Number((await q.query<{ held: string | number }>(heldSql, [sessionId])).rows[0]?.held ?? 0);
  /** Runs `write` when `bytes` more fit under `limit`, under the session's advisory lock (see the header). */
  const within = async (
    sessionId: string,
    bytes: number,
    limit: number,
    write: (q: Pick<pg.PoolClient, "query">) => Promise<unknown>,
  ): Promise<Bounded> => {
    if (!Number.isFinite(limit)) {
      await write(pool);
      return { ok: true };
    }
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`quiver.spills:${sessionId}`]);
      const held = await heldBy(client, sessionId);
      if (held + bytes > limit) {
        await client.query("ROLLBACK");
        return { ok: false, held };
      }
      await write(client);
      await client.query("COMMIT");
      return { ok: true };
    } catch (e) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  };
  return {
    async insert(r, limit = Infinity) {
      return within(r.sessionId, r.bytes.byteLength, limit, (q) =>
        q.query(
          `INSERT INTO "Spill" ("id","sessionId","toolCallId","bytes","size","sha256","createdAt","expiresAt") VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
          [r.id, r.sessionId, r.toolCallId, buf(r.bytes), r.size, r.sha256, r.createdAt, r.expiresAt],
        ),
      );
    },
    async appendChunk(id, sessionId, offset, bytes, limit = Infinity) {
      return within(sessionId, bytes.byteLength, limit, (q) =>
        q.query(`INSERT INTO "SpillChunk" ("spillId","offset","bytes") VALUES ($1,$2,$3)`, [id, offset, buf(bytes)]),
      );
    },
    async seal(id, size, sha256) {
      await pool.query(`UPDATE "Spill" SET "size" = $1, "sha256" = $2 WHERE "id" = $3`, [size, sha256, id]);
    },
    async slice(id, from, length) {
      const res = await pool.query<{ chunk: Buffer | null }>(
        `SELECT substring("bytes" FROM $1::int FOR $2::int) AS chunk FROM "Spill" WHERE "id" = $3`,
        [from + 1, length, id],
      );
      const head = res.rows[0]?.chunk ?? Buffer.alloc(0);
      const rows = await pool.query<{ offset: number; bytes: Buffer }>(
        `SELECT "offset", "bytes" FROM "SpillChunk" WHERE "spillId" = $1 AND "offset" > $2 AND "offset" < $3 ORDER BY "offset"`,
        [id, from - SPILL_CHUNK, from + length],
      );
      if (rows.rows.length === 0) return new Uint8Array(head);
      return new Uint8Array(Buffer.concat([head, assemble(rows.rows, from, from + length)]));
    },
    async *pieces(id) {
      const first = await pool.query<{ bytes: Buffer }>(`SELECT "bytes" FROM "Spill" WHERE "id" = $1`, [id]);
      if (!first.rows[0]) return;
      if (first.rows[0].bytes.length > 0) yield new Uint8Array(first.rows[0].bytes);
      for (let at = -1; ;) {
        const res = await pool.query<{ offset: number; bytes: Buffer }>(
          `SELECT "offset", "bytes" FROM "SpillChunk" WHERE "spillId" = $1 AND "offset" > $2 ORDER BY "offset" LIMIT 1`,
          [id, at],
        );
        const row = res.rows[0];
        if (!row) return;
        at = row.offset;
        yield new Uint8Array(row.bytes);
      }
    },
    close: () => pool.end(),
  };
}

/** `url`: the same database URL the Prisma client was opened with. */
export function openBlobChannel(url: string): BlobChannel {
  return providerOf(url) === "postgresql" ? postgresChannel(url) : sqliteChannel(url);
}
