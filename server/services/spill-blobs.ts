// The byte path of spills: inserts and slice reads of Spill.bytes and SpillChunk.bytes through the
// database driver Prisma itself sits on (better-sqlite3, node-postgres), on the same tables and
// schema. Why: Prisma 6.19's driver adapters serialise Bytes values at a few MB/s (a 10 MB spill
// took 2-10 s through create or $executeRaw), far from the 100 ms a cut result may cost. A spill's
// bytes are its own `bytes` (offset 0) followed by its chunks in offset order; a chunk is at most
// SPILL_CHUNK bytes, so a slice read touches at most the chunks it overlaps plus one. Metadata
// queries and clean-up stay in Prisma (chunks go with their spill by the foreign key's cascade).
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

export interface BlobChannel {
  insert(row: SpillRow): Promise<void>;
  /** Appends the piece at `offset` of a spill whose row exists (pieces of at most SPILL_CHUNK bytes). */
  appendChunk(id: string, offset: number, bytes: Uint8Array): Promise<void>;
  /** Records the final size and digest of a streamed spill. */
  seal(id: string, size: number, sha256: string): Promise<void>;
  /** Bytes [from, from + length) of a spill (clamped), regardless of expiry. */
  slice(id: string, from: number, length: number): Promise<Uint8Array>;
  /** The spill's bytes in order, one stored piece at a time. */
  pieces(id: string): AsyncGenerator<Uint8Array>;
  close(): Promise<void>;
}

const buf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

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
  const seal = db.prepare(`UPDATE "Spill" SET "size" = ?, "sha256" = ? WHERE "id" = ?`);
  const overlapping = db.prepare(
    `SELECT "offset", "bytes" FROM "SpillChunk" WHERE "spillId" = ? AND "offset" > ? AND "offset" < ? ORDER BY "offset"`,
  );
  const after = db.prepare(
    `SELECT "offset", "bytes" FROM "SpillChunk" WHERE "spillId" = ? AND "offset" > ? ORDER BY "offset" LIMIT 1`,
  );
  return {
    async insert(r) {
      insert.run(
        r.id,
        r.sessionId,
        r.toolCallId,
        buf(r.bytes),
        r.size,
        r.sha256,
        sqliteDate(r.createdAt),
        sqliteDate(r.expiresAt),
      );
    },
    async appendChunk(id, offset, bytes) {
      append.run(id, offset, buf(bytes));
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
  return {
    async insert(r) {
      await pool.query(
        `INSERT INTO "Spill" ("id","sessionId","toolCallId","bytes","size","sha256","createdAt","expiresAt") VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
        [r.id, r.sessionId, r.toolCallId, buf(r.bytes), r.size, r.sha256, r.createdAt, r.expiresAt],
      );
    },
    async appendChunk(id, offset, bytes) {
      await pool.query(`INSERT INTO "SpillChunk" ("spillId","offset","bytes") VALUES ($1,$2,$3)`, [
        id,
        offset,
        buf(bytes),
      ]);
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
