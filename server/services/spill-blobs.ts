// The byte path of spills: inserts and slice reads of Spill.bytes through the database driver
// Prisma itself sits on (better-sqlite3, node-postgres), on the same table and schema. Why:
// Prisma 6.19's driver adapters serialise Bytes values at a few MB/s (a 10 MB spill took 2-10 s
// through create or $executeRaw), far from the 100 ms a cut result may cost. Metadata queries
// and clean-up stay in Prisma.
import { openPgPool, openSqlite, providerOf, sqliteDate } from "../db/driver";

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
  /** Bytes [from, from + length) of a spill (clamped), regardless of expiry. */
  slice(id: string, from: number, length: number): Promise<Uint8Array>;
  whole(id: string): Promise<Uint8Array | undefined>;
  close(): Promise<void>;
}

function sqliteChannel(url: string): BlobChannel {
  const db = openSqlite(url);
  const insert = db.prepare(
    `INSERT INTO "Spill" ("id","sessionId","toolCallId","bytes","size","sha256","createdAt","expiresAt") VALUES (?,?,?,?,?,?,?,?)`,
  );
  const slice = db.prepare(`SELECT substr("bytes", ?, ?) AS chunk FROM "Spill" WHERE "id" = ?`).pluck();
  const whole = db.prepare(`SELECT "bytes" FROM "Spill" WHERE "id" = ?`).pluck();
  const buf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return {
    async insert(r) {
      insert.run(r.id, r.sessionId, r.toolCallId, buf(r.bytes), r.size, r.sha256, sqliteDate(r.createdAt), sqliteDate(r.expiresAt));
    },
    async slice(id, from, length) {
      const chunk = slice.get(from + 1, length, id) as Buffer | undefined;
      return chunk ? new Uint8Array(chunk) : new Uint8Array(0);
    },
    async whole(id) {
      const b = whole.get(id) as Buffer | undefined;
      return b ? new Uint8Array(b) : undefined;
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
        [r.id, r.sessionId, r.toolCallId, Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength), r.size, r.sha256, r.createdAt, r.expiresAt],
      );
    },
    async slice(id, from, length) {
      const res = await pool.query<{ chunk: Buffer | null }>(`SELECT substring("bytes" FROM $1::int FOR $2::int) AS chunk FROM "Spill" WHERE "id" = $3`, [from + 1, length, id]);
      const chunk = res.rows[0]?.chunk;
      return chunk ? new Uint8Array(chunk) : new Uint8Array(0);
    },
    async whole(id) {
      const res = await pool.query<{ bytes: Buffer }>(`SELECT "bytes" FROM "Spill" WHERE "id" = $1`, [id]);
      return res.rows[0] ? new Uint8Array(res.rows[0].bytes) : undefined;
    },
    close: () => pool.end(),
  };
}

/** `url`: the same database URL the Prisma client was opened with. */
export function openBlobChannel(url: string): BlobChannel {
  return providerOf(url) === "postgresql" ? postgresChannel(url) : sqliteChannel(url);
}
