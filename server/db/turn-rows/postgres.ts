// Turn rows on PostgreSQL (index.ts says why and what), through a small node-postgres pool.
// `begin` locks the session's row first (FOR UPDATE), so two sends to one session, from this
// instance or another, cannot both find it idle. Dates go as UTC ISO text into timestamp(3),
// which ignores the zone, as Prisma stores them.
import type pg from "pg";
import { openPgPool } from "../driver";
import { rowId } from "../row-id";
import { jsonbText } from "../storable";
import type { SessionEvent } from "../../protocol/events";
import type { ImageRef } from "../../protocol/attachments";
import { postgresCallRows } from "./calls-postgres";
import { NoAttachment, userContent, type TurnBegun, type TurnRows } from "./index";

const now = () => new Date().toISOString();

async function inTransaction<T>(pool: pg.Pool, work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query("BEGIN");
    const out = await work(c);
    await c.query("COMMIT");
    c.release();
    return out;
  } catch (err) {
    // A connection whose ROLLBACK fails is broken: destroyed, not handed to the next caller.
    const rolledBack = await c.query("ROLLBACK").then(
      () => true,
      () => false,
    );
    c.release(rolledBack ? undefined : (err as Error));
    throw err;
  }
}

const INSERT_MESSAGE = `INSERT INTO "Message" ("id","sessionId","turnId","position","role","content","createdAt") VALUES ($1,$2,$3,$4,$5,$6::jsonb,$7::timestamp(3))`;

export function postgresTurnRows(url: string): TurnRows {
  const pool = openPgPool(url, 4);
  return {
    ...postgresCallRows(pool),
    query: async (sql, args) => (await pool.query(sql, args)).rows,
    execute: async (sql, args) => (await pool.query(sql, args)).rowCount ?? 0,
    begin: (b) =>
      inTransaction(pool, async (c): Promise<TurnBegun> => {
        const found = await c.query<{ provider: string | null; model: string | null }>(
          `SELECT "provider","model" FROM "Session" WHERE "id" = $1${b.orgId === undefined ? "" : ` AND "orgId" = $2`} FOR UPDATE`,
          b.orgId === undefined ? [b.sessionId] : [b.sessionId, b.orgId],
        );
        if (found.rowCount === 0) return { ok: false, reason: "not_found" } as const;
        const state = await c.query<{ busy: boolean; top: number | null }>(
          `SELECT EXISTS (SELECT 1 FROM "Turn" WHERE "sessionId" = $1 AND "status" = 'running') AS "busy", (SELECT MAX("position") FROM "Message" WHERE "sessionId" = $1) AS "top"`,
          [b.sessionId],
        );
        if (state.rows[0].busy) return { ok: false, reason: "busy" } as const;
        const position = (state.rows[0].top ?? -1) + 1;
        const [turnId, messageId, at] = [rowId(), rowId(), now()];
        const images: ImageRef[] = [];
        for (const image of b.images ?? []) {
          if ("reuse" in image) {
            const known = await c.query<{ mediaType: string; size: number }>(
              `SELECT "mediaType","size" FROM "Attachment" WHERE "id" = $1 AND "sessionId" = $2`,
              [image.reuse, b.sessionId],
            );
            // Thrown, not returned: the transaction must roll back the images stored before it.
            if (known.rowCount === 0) throw new NoAttachment(image.reuse);
            images.push({
              id: image.reuse,
              mediaType: known.rows[0].mediaType as ImageRef["mediaType"],
              bytes: known.rows[0].size,
            });
          } else {
            await c.query(
              `INSERT INTO "Attachment" ("id","sessionId","mediaType","bytes","size","sha256","createdAt") VALUES ($1,$2,$3,$4,$5,$6,$7::timestamp(3))`,
              [
                image.id,
                b.sessionId,
                image.mediaType,
                Buffer.from(image.bytes.buffer, image.bytes.byteOffset, image.bytes.byteLength),
                image.bytes.byteLength,
                image.sha256,
                at,
              ],
            );
            images.push({
              id: image.id,
              mediaType: image.mediaType as ImageRef["mediaType"],
              bytes: image.bytes.byteLength,
            });
          }
        }
        await c.query(
          `INSERT INTO "Turn" ("id","sessionId","status","startedAt","instanceId") VALUES ($1,$2,'running',$3::timestamp(3),$4)`,
          [turnId, b.sessionId, at, b.instanceId ?? null],
        );
        await c.query(INSERT_MESSAGE, [
          messageId,
          b.sessionId,
          turnId,
          position,
          "user",
          jsonbText(JSON.stringify(userContent(b.text, images))),
          at,
        ]);
        await c.query(`UPDATE "Session" SET "status" = 'running', "updatedAt" = $2::timestamp(3) WHERE "id" = $1`, [
          b.sessionId,
          at,
        ]);
        const { provider, model } = found.rows[0];
        return { ok: true, turnId, messageId, position, provider, model, images };
      }).catch((err: unknown) => {
        if (err instanceof NoAttachment) return { ok: false, reason: "no_attachment", id: err.id } as const;
        throw err;
      }),
    async images(sessionId, ids) {
      if (ids.length === 0) return [];
      const { rows } = await pool.query<{ id: string; mediaType: string; bytes: Buffer }>(
        `SELECT "id","mediaType","bytes" FROM "Attachment" WHERE "sessionId" = $1 AND "id" = ANY($2::text[])`,
        [sessionId, ids],
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      return ids.flatMap((id) => {
        const r = byId.get(id);
        return r ? [{ id, mediaType: r.mediaType, base64: r.bytes.toString("base64") }] : [];
      });
    },
    async events(sessionId, afterSeq, upToSeq, limit) {
      // timestamp(3) holds UTC without a zone: formatted here, not read as local time by the driver.
      const { rows } = await pool.query<{ seq: number; payload: object; at: string }>(
        `SELECT "seq","payload",to_char("createdAt", 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "at" FROM "SessionEvent" WHERE "sessionId" = $1 AND "seq" > $2 AND "seq" <= $3 ORDER BY "seq" LIMIT $4`,
        [sessionId, afterSeq, upToSeq, limit],
      );
      return rows.map((r) => Object.assign(r.payload, { seq: r.seq, sessionId, at: r.at }) as SessionEvent);
    },
    async conversation(sessionId) {
      // A rewound turn's messages stay stored (and in the events) but leave the model's context (issue 27).
      const { rows } = await pool.query<{ role: string; content: unknown }>(
        `SELECT m."role", m."content" FROM "Message" m LEFT JOIN "Turn" t ON t."id" = m."turnId" WHERE m."sessionId" = $1 AND t."rewindId" IS NULL ORDER BY m."position"`,
        [sessionId],
      );
      return rows;
    },
    async openRequest(r) {
      const id = rowId();
      await pool.query(
        `INSERT INTO "ModelRequest" ("id","turnId","provider","model","attempt","startedAt") VALUES ($1,$2,$3,$4,$5,$6::timestamp(3))`,
        [id, r.turnId, r.provider, r.model, r.attempt, now()],
      );
      return id;
    },
    async closeRequest(id, r) {
      const u = r.usage;
      await pool.query(
        `UPDATE "ModelRequest" SET "stopReason" = $2, "error" = $3, "endedAt" = $4::timestamp(3), "inputTokens" = $5, "outputTokens" = $6, "cacheReadTokens" = $7, "cacheWriteTokens" = $8 WHERE "id" = $1`,
        [id, r.stopReason, r.error, now(), u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens],
      );
    },
    async addMessage(m) {
      const id = rowId();
      await pool.query(INSERT_MESSAGE, [
        id,
        m.sessionId,
        m.turnId,
        m.position,
        m.role,
        jsonbText(JSON.stringify(m.content)),
        now(),
      ]);
      return id;
    },
    async setMessageContent(id, content) {
      await pool.query(`UPDATE "Message" SET "content" = $2::jsonb WHERE "id" = $1`, [
        id,
        jsonbText(JSON.stringify(content)),
      ]);
    },
    async turnUsage(turnId, u) {
      await pool.query(
        `UPDATE "Turn" SET "inputTokens" = $2, "outputTokens" = $3, "cacheReadTokens" = $4, "cacheWriteTokens" = $5 WHERE "id" = $1`,
        [turnId, u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens],
      );
    },
    async end(e) {
      const u = e.usage;
      // One statement, so one round trip and atomic without a transaction block.
      const { rows } = await pool.query<{ ended: boolean }>(
        `WITH "turn" AS (UPDATE "Turn" SET "status" = $2, "stopReason" = $3, "error" = $4, "endedAt" = $5::timestamp(3), "inputTokens" = $6, "outputTokens" = $7, "cacheReadTokens" = $8, "cacheWriteTokens" = $9
             WHERE "id" = $1 AND "instanceId" IS NOT DISTINCT FROM $12 RETURNING 1),
           "session" AS (UPDATE "Session" SET "status" = $11, "updatedAt" = $5::timestamp(3) WHERE "id" = $10 AND EXISTS (SELECT 1 FROM "turn"))
         SELECT EXISTS (SELECT 1 FROM "turn") AS "ended"`,
        [
          e.turnId,
          e.status,
          e.stopReason,
          e.error,
          now(),
          u.inputTokens,
          u.outputTokens,
          u.cacheReadTokens,
          u.cacheWriteTokens,
          e.sessionId,
          e.sessionStatus,
          e.instanceId ?? null,
        ],
      );
      return rows[0].ended;
    },
    close: () => pool.end(),
  };
}
