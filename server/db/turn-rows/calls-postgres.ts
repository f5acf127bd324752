// Tool call rows on PostgreSQL (calls.ts says why and what). The call's row and its audit entry
// are one statement (an INSERT … RETURNING feeding the second INSERT), so one round trip and
// atomic without a transaction of its own. Dates as UTC ISO text into timestamp(3).
import type pg from "pg";
import { rowId } from "../row-id";
import {
  auditValues,
  callValues,
  NoCallRow,
  PATCH_COLUMNS,
  type CallPatch,
  type CallRows,
  type DispatchRows,
} from "./calls";

const CALL_COLUMNS = `"id","sessionId","turnId","providerCallId","slot","name","input","status","decision","decisionReason","mode","parentCallId","result","isError","endedAt","createdAt"`;
const CALL_VALUES = `$1,$2,$3,$4,$5,$6,$7::jsonb,$8,$9,$10,$11,$12,$13,$14,$15::timestamp(3),$16::timestamp(3)`;
const AUDIT_COLUMNS = `"id","orgId","sessionId","actorId","action","target","detail","createdAt"`;
const CAST: Partial<Record<keyof CallPatch, string>> = {
  startedAt: "::timestamp(3)",
  endedAt: "::timestamp(3)",
};

const value = (v: unknown) => (v instanceof Date ? v.toISOString() : v);

// One round trip: the session with its org, and the rest as subqueries.
const DISPATCH_ROWS = `SELECT s."orgId", s."mode", o."forbiddenModes",
  (SELECT jsonb_build_object('version', p."version", 'rules', p."rules") FROM "OrgPolicy" p
    WHERE p."orgId" = s."orgId" ORDER BY p."version" DESC LIMIT 1) AS "policy",
  (SELECT coalesce(jsonb_agg(jsonb_build_object('status', a."status", 'fingerprint', a."fingerprint",
      'exactFingerprint', a."exactFingerprint", 'message', a."message")), '[]'::jsonb) FROM "Approval" a
    WHERE a."sessionId" = s."id" AND ((a."status" = 'approved' AND a."scope" = 'session') OR a."status" = 'rejected')) AS "approvals",
  EXISTS (SELECT 1 FROM "ToolCall" c WHERE c."turnId" IS NOT DISTINCT FROM $2 AND c."sessionId" = s."id"
    AND c."parentCallId" IS NOT DISTINCT FROM $3) AS "stored"
  FROM "Session" s JOIN "Org" o ON o."id" = s."orgId" WHERE s."id" = $1`;

export function postgresCallRows(pool: pg.Pool): CallRows {
  return {
    async dispatchRows(sessionId, turnId, parentCallId) {
      const { rows } = await pool.query<DispatchRows>(DISPATCH_ROWS, [sessionId, turnId, parentCallId]);
      return rows[0];
    },
    async addCall(c, a) {
      const id = rowId();
      const at = new Date().toISOString();
      const call = callValues(
        id,
        c,
        at,
        (d) => d.toISOString(),
        (b) => b,
      );
      if (!a) await pool.query(`INSERT INTO "ToolCall" (${CALL_COLUMNS}) VALUES (${CALL_VALUES})`, call);
      else
        await pool.query(
          `WITH c AS (INSERT INTO "ToolCall" (${CALL_COLUMNS}) VALUES (${CALL_VALUES}) RETURNING "id") ` +
            `INSERT INTO "AuditEvent" (${AUDIT_COLUMNS}) SELECT $17,$18,$19,$20,$21,$22,$23::jsonb,$16::timestamp(3) FROM c`,
          [...call, ...auditValues(id, a)],
        );
      return id;
    },
    async updateCall(id, patch) {
      const columns = PATCH_COLUMNS.filter((k) => patch[k] !== undefined);
      if (columns.length === 0) return;
      const set = columns.map((k, i) => `"${k}" = $${i + 2}${CAST[k] ?? ""}`).join(", ");
      const r = await pool.query(`UPDATE "ToolCall" SET ${set} WHERE "id" = $1`, [
        id,
        ...columns.map((k) => value(patch[k])),
      ]);
      if (r.rowCount === 0) throw new NoCallRow(id);
    },
    async addAudit(toolCallId, a) {
      await pool.query(
        `INSERT INTO "AuditEvent" (${AUDIT_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7::jsonb,$8::timestamp(3))`,
        [...auditValues(toolCallId, a), new Date().toISOString()],
      );
    },
  };
}
