// Turn rows on SQLite (index.ts says why and what): better-sqlite3 statements prepared once.
// `begin` runs as an IMMEDIATE transaction, holding the write lock from its first read, so
// two sends to one session cannot both find it idle.
import { openSqlite, sqliteDate } from "../driver";
import { rowId } from "../row-id";
import type { SessionEvent } from "../../protocol/events";
import type { TurnBegin, TurnBegun, TurnRows } from "./index";

const now = () => sqliteDate(new Date());

export function sqliteTurnRows(url: string): TurnRows {
  const db = openSqlite(url);
  const session = db.prepare(`SELECT "provider","model" FROM "Session" WHERE "id" = ?`);
  const sessionInOrg = db.prepare(`SELECT "provider","model" FROM "Session" WHERE "id" = ? AND "orgId" = ?`);
  const running = db.prepare(`SELECT 1 FROM "Turn" WHERE "sessionId" = ? AND "status" = 'running' LIMIT 1`);
  const top = db.prepare(`SELECT MAX("position") AS "top" FROM "Message" WHERE "sessionId" = ?`);
  const insertTurn = db.prepare(`INSERT INTO "Turn" ("id","sessionId","status","startedAt","instanceId") VALUES (?,?,'running',?,?)`);
  const insertMessage = db.prepare(`INSERT INTO "Message" ("id","sessionId","turnId","position","role","content","createdAt") VALUES (?,?,?,?,?,?,?)`);
  const sessionStatus = db.prepare(`UPDATE "Session" SET "status" = ?, "updatedAt" = ? WHERE "id" = ?`);
  const messages = db.prepare(`SELECT "role","content" FROM "Message" WHERE "sessionId" = ? ORDER BY "position"`);
  const messageContent = db.prepare(`UPDATE "Message" SET "content" = ? WHERE "id" = ?`);
  const insertRequest = db.prepare(`INSERT INTO "ModelRequest" ("id","turnId","provider","model","attempt","startedAt") VALUES (?,?,?,?,?,?)`);
  const closeRequest = db.prepare(
    `UPDATE "ModelRequest" SET "stopReason" = ?, "error" = ?, "endedAt" = ?, "inputTokens" = ?, "outputTokens" = ?, "cacheReadTokens" = ?, "cacheWriteTokens" = ? WHERE "id" = ?`,
  );
  const turnUsage = db.prepare(`UPDATE "Turn" SET "inputTokens" = ?, "outputTokens" = ?, "cacheReadTokens" = ?, "cacheWriteTokens" = ? WHERE "id" = ?`);
  const endTurn = db.prepare(
    `UPDATE "Turn" SET "status" = ?, "stopReason" = ?, "error" = ?, "endedAt" = ?, "inputTokens" = ?, "outputTokens" = ?, "cacheReadTokens" = ?, "cacheWriteTokens" = ? WHERE "id" = ? AND "instanceId" IS ?`,
  );

  const begin = db.transaction((b: TurnBegin): TurnBegun => {
    const found = (b.orgId === undefined ? session.get(b.sessionId) : sessionInOrg.get(b.sessionId, b.orgId)) as { provider: string | null; model: string | null } | undefined;
    if (!found) return { ok: false, reason: "not_found" };
    if (running.get(b.sessionId)) return { ok: false, reason: "busy" };
    const { top: last } = top.get(b.sessionId) as { top: number | null };
    const position = (last ?? -1) + 1;
    const [turnId, messageId, at] = [rowId(), rowId(), now()];
    insertTurn.run(turnId, b.sessionId, at, b.instanceId ?? null);
    insertMessage.run(messageId, b.sessionId, turnId, position, "user", JSON.stringify([{ type: "text", text: b.text }]), at);
    sessionStatus.run("running", at, b.sessionId);
    return { ok: true, turnId, messageId, position, provider: found.provider, model: found.model };
  });
  const events = db.prepare(`SELECT "seq","payload","createdAt" FROM "SessionEvent" WHERE "sessionId" = ? AND "seq" > ? AND "seq" <= ? ORDER BY "seq" LIMIT ?`);
  const end = db.transaction((turnId: string, instanceId: string | null, sessionId: string, values: unknown[], status: string) => {
    if (endTurn.run(...values, turnId, instanceId).changes === 0) return false;
    sessionStatus.run(status, now(), sessionId);
    return true;
  });

  return {
    // Stored as Prisma does, ISO text with +00:00: the event's `at` is the same instant in Z form.
    events: async (sessionId, afterSeq, upToSeq, limit) =>
      (events.all(sessionId, afterSeq, upToSeq, limit) as { seq: number; payload: string; createdAt: string }[]).map((r) =>
        Object.assign(JSON.parse(r.payload) as object, { seq: r.seq, sessionId, at: new Date(r.createdAt).toISOString() }) as SessionEvent,
      ),
    begin: async (b) => begin.immediate(b),
    conversation: async (sessionId) => (messages.all(sessionId) as { role: string; content: string }[]).map((r) => ({ role: r.role, content: JSON.parse(r.content) })),
    async openRequest(r) {
      const id = rowId();
      insertRequest.run(id, r.turnId, r.provider, r.model, r.attempt, now());
      return id;
    },
    async closeRequest(id, r) {
      const u = r.usage;
      closeRequest.run(r.stopReason, r.error, now(), u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens, id);
    },
    async addMessage(m) {
      const id = rowId();
      insertMessage.run(id, m.sessionId, m.turnId, m.position, m.role, JSON.stringify(m.content), now());
      return id;
    },
    setMessageContent: async (id, content) => void messageContent.run(JSON.stringify(content), id),
    turnUsage: async (turnId, u) => void turnUsage.run(u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens, turnId),
    async end(e) {
      const u = e.usage;
      return end(e.turnId, e.instanceId ?? null, e.sessionId, [e.status, e.stopReason, e.error, now(), u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens], e.sessionStatus);
    },
    close: async () => void db.close(),
  };
}
