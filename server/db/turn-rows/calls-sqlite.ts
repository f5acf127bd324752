// Tool call rows on SQLite (calls.ts says why and what): statements prepared once, an update's
// statement once per set of columns it sets.
import type Database from "better-sqlite3";
import { sqliteDate, whenFree } from "../driver";
import { rowId } from "../row-id";
import { parseJsonText } from "../json-text";
import {
  auditValues,
  callValues,
  NoCallRow,
  PATCH_COLUMNS,
  type CallAudit,
  type CallPatch,
  type CallRows,
  type DispatchRows,
} from "./calls";

const value = (v: unknown) => (v instanceof Date ? sqliteDate(v) : typeof v === "boolean" ? (v ? 1 : 0) : v);

export function sqliteCallRows(db: Database.Database): CallRows {
  const insertCall = db.prepare(
    `INSERT INTO "ToolCall" ("id","sessionId","turnId","providerCallId","slot","name","input","status","decision","decisionReason","mode","parentCallId","result","isError","endedAt","createdAt") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
  );
  const insertAudit = db.prepare(
    `INSERT INTO "AuditEvent" ("id","orgId","sessionId","actorId","action","target","detail","createdAt") VALUES (?,?,?,?,?,?,?,?)`,
  );
  const audit = (toolCallId: string, a: CallAudit, at: string) => insertAudit.run(...auditValues(toolCallId, a), at);
  const add = db.transaction((c: Parameters<CallRows["addCall"]>[0], a: CallAudit | undefined) => {
    const id = rowId();
    const at = sqliteDate(new Date());
    insertCall.run(...callValues(id, c, at, sqliteDate, (b) => (b ? 1 : 0)));
    if (a) audit(id, a, at);
    return id;
  });
  const session = db.prepare(
    `SELECT s."orgId", s."mode", o."forbiddenModes" FROM "Session" s JOIN "Org" o ON o."id" = s."orgId" WHERE s."id" = ?`,
  );
  const policy = db.prepare(
    `SELECT "version","rules" FROM "OrgPolicy" WHERE "orgId" = ? ORDER BY "version" DESC LIMIT 1`,
  );
  const approvals = db.prepare(
    `SELECT "status","fingerprint","exactFingerprint","message" FROM "Approval" WHERE "sessionId" = ? AND (("status" = 'approved' AND "scope" = 'session') OR "status" = 'rejected')`,
  );
  const stored = db.prepare(
    `SELECT 1 FROM "ToolCall" WHERE "turnId" IS ? AND "sessionId" = ? AND "parentCallId" IS ? LIMIT 1`,
  );
  // One read transaction: the four answers are of one moment.
  const dispatchRows = db.transaction((sessionId: string, turnId: string | null, parentCallId: string | null) => {
    const s = session.get(sessionId) as { orgId: string; mode: string; forbiddenModes: string } | undefined;
    if (!s) return undefined;
    const p = policy.get(s.orgId) as { version: number; rules: string } | undefined;
    return {
      orgId: s.orgId,
      mode: s.mode,
      // As stored (JSON text): parseForbidden reads it, and fails closed on text that does not parse.
      forbiddenModes: s.forbiddenModes,
      // Text that does not parse is handed on for the policy's validation to refuse with its
      // version named (services/policies.ts), not a SyntaxError ending the dispatch.
      policy: p ? { version: p.version, rules: parseJsonText(p.rules, (text) => text) } : null,
      approvals: approvals.all(sessionId) as DispatchRows["approvals"],
      stored: stored.get(turnId, sessionId, parentCallId) !== undefined,
    };
  });
  const updates = new Map<string, Database.Statement>();
  return {
    dispatchRows: (sessionId, turnId, parentCallId) => whenFree(() => dispatchRows(sessionId, turnId, parentCallId)),
    addCall: (call, a) => whenFree(() => add(call, a)),
    async updateCall(id, patch) {
      const columns = PATCH_COLUMNS.filter((k) => patch[k] !== undefined);
      if (columns.length === 0) return;
      const key = columns.join(",");
      let statement = updates.get(key);
      if (!statement) {
        statement = db.prepare(`UPDATE "ToolCall" SET ${columns.map((k) => `"${k}" = ?`).join(", ")} WHERE "id" = ?`);
        updates.set(key, statement);
      }
      const changed = (
        await whenFree(() => statement.run(...columns.map((k) => value(patch[k as keyof CallPatch])), id))
      ).changes;
      if (changed === 0) throw new NoCallRow(id);
    },
    addAudit: async (toolCallId, a) => void (await whenFree(() => audit(toolCallId, a, sqliteDate(new Date())))),
  };
}
