// Turn rows on SQLite (index.ts says why and what): better-sqlite3 statements prepared once.
// `begin` runs as an IMMEDIATE transaction, holding the write lock from its first read, so
// two sends to one session cannot both find it idle.
import type { Statement } from "better-sqlite3";
import { openSqlite, sqliteDate, whenFree } from "../driver";
import { rowId } from "../row-id";
import type { SessionEvent } from "../../protocol/events";
import type { ImageRef } from "../../protocol/attachments";
import { sqliteCallRows } from "./calls-sqlite";
import { NoAttachment, userContent, type TurnBegin, type TurnBegun, type TurnRows } from "./index";

const now = () => sqliteDate(new Date());

export function sqliteTurnRows(url: string): TurnRows {
  // Writes wait asynchronously for the lock (whenFree): this thread also runs a Prisma client.
  const db = openSqlite(url, { wait: false });
  const session = db.prepare(`SELECT "provider","model" FROM "Session" WHERE "id" = ?`);
  const sessionInOrg = db.prepare(`SELECT "provider","model" FROM "Session" WHERE "id" = ? AND "orgId" = ?`);
  const running = db.prepare(`SELECT 1 FROM "Turn" WHERE "sessionId" = ? AND "status" = 'running' LIMIT 1`);
  const top = db.prepare(`SELECT MAX("position") AS "top" FROM "Message" WHERE "sessionId" = ?`);
  const insertTurn = db.prepare(
    `INSERT INTO "Turn" ("id","sessionId","status","startedAt","instanceId") VALUES (?,?,'running',?,?)`,
  );
  const insertMessage = db.prepare(
    `INSERT INTO "Message" ("id","sessionId","turnId","position","role","content","createdAt") VALUES (?,?,?,?,?,?,?)`,
  );
  const sessionStatus = db.prepare(`UPDATE "Session" SET "status" = ?, "updatedAt" = ? WHERE "id" = ?`);
  // A rewound turn's messages stay stored (and in the events) but leave the model's context (issue 27).
  const messages = db.prepare(
    `SELECT m."role", m."content" FROM "Message" m LEFT JOIN "Turn" t ON t."id" = m."turnId" WHERE m."sessionId" = ? AND t."rewindId" IS NULL ORDER BY m."position"`,
  );
  const messageContent = db.prepare(`UPDATE "Message" SET "content" = ? WHERE "id" = ?`);
  const insertRequest = db.prepare(
    `INSERT INTO "ModelRequest" ("id","turnId","provider","model","attempt","startedAt") VALUES (?,?,?,?,?,?)`,
  );
  const closeRequest = db.prepare(
    `UPDATE "ModelRequest" SET "stopReason" = ?, "error" = ?, "endedAt" = ?, "inputTokens" = ?, "outputTokens" = ?, "cacheReadTokens" = ?, "cacheWriteTokens" = ? WHERE "id" = ?`,
  );
  const turnUsage = db.prepare(
    `UPDATE "Turn" SET "inputTokens" = ?, "outputTokens" = ?, "cacheReadTokens" = ?, "cacheWriteTokens" = ? WHERE "id" = ?`,
  );
  const endTurn = db.prepare(
    `UPDATE "Turn" SET "status" = ?, "stopReason" = ?, "error" = ?, "endedAt" = ?, "inputTokens" = ?, "outputTokens" = ?, "cacheReadTokens" = ?, "cacheWriteTokens" = ? WHERE "id" = ? AND "instanceId" IS ?`,
  );

  const insertImage = db.prepare(
    `INSERT INTO "Attachment" ("id","sessionId","mediaType","bytes","size","sha256","createdAt") VALUES (?,?,?,?,?,?,?)`,
  );
  const imageMeta = db.prepare(`SELECT "mediaType","size" FROM "Attachment" WHERE "id" = ? AND "sessionId" = ?`);
  const imageBytes = db.prepare(`SELECT "mediaType","bytes" FROM "Attachment" WHERE "id" = ? AND "sessionId" = ?`);

  const begin = db.transaction((b: TurnBegin): TurnBegun => {
    const found = (b.orgId === undefined ? session.get(b.sessionId) : sessionInOrg.get(b.sessionId, b.orgId)) as
      { provider: string | null; model: string | null } | undefined;
    if (!found) return { ok: false, reason: "not_found" };
    if (running.get(b.sessionId)) return { ok: false, reason: "busy" };
    const { top: last } = top.get(b.sessionId) as { top: number | null };
    const position = (last ?? -1) + 1;
    const [turnId, messageId, at] = [rowId(), rowId(), now()];
    const images: ImageRef[] = [];
    for (const image of b.images ?? []) {
      if ("reuse" in image) {
        const known = imageMeta.get(image.reuse, b.sessionId) as { mediaType: string; size: number } | undefined;
        // Thrown, not returned: the transaction must roll back the images stored before it.
        if (!known) throw new NoAttachment(image.reuse);
        images.push({ id: image.reuse, mediaType: known.mediaType as ImageRef["mediaType"], bytes: known.size });
      } else {
        insertImage.run(
          image.id,
          b.sessionId,
          image.mediaType,
          Buffer.from(image.bytes.buffer, image.bytes.byteOffset, image.bytes.byteLength),
          image.bytes.byteLength,
          image.sha256,
          at,
        );
        images.push({
          id: image.id,
          mediaType: image.mediaType as ImageRef["mediaType"],
          bytes: image.bytes.byteLength,
        });
      }
    }
    insertTurn.run(turnId, b.sessionId, at, b.instanceId ?? null);
    insertMessage.run(
      messageId,
      b.sessionId,
      turnId,
      position,
      "user",
      JSON.stringify(userContent(b.text, images)),
      at,
    );
    sessionStatus.run("running", at, b.sessionId);
    return { ok: true, turnId, messageId, position, provider: found.provider, model: found.model, images };
  });
  const events = db.prepare(
    `SELECT "seq","payload","createdAt" FROM "SessionEvent" WHERE "sessionId" = ? AND "seq" > ? AND "seq" <= ? ORDER BY "seq" LIMIT ?`,
  );
  const end = db.transaction(
    (turnId: string, instanceId: string | null, sessionId: string, values: unknown[], status: string) => {
      if (endTurn.run(...values, turnId, instanceId).changes === 0) return false;
      sessionStatus.run(status, now(), sessionId);
      return true;
    },
  );

  // Plain SQL by its text: the few statements the hot paths send, each prepared once.
  const plain = new Map<string, Statement>();
  const statement = (sql: string) => {
    let st = plain.get(sql);
    if (!st) {
      if (plain.size >= 64) plain.clear();
      plain.set(sql, (st = db.prepare(sql)));
    }
    return st;
  };
  // Bound as Prisma binds them: a date as ISO text with +00:00, a boolean as 1 or 0 (the driver
  // refuses booleans).
  const bind = (args: unknown[]) =>
    args.map((a) => (a instanceof Date ? sqliteDate(a) : typeof a === "boolean" ? Number(a) : a));

  return {
    ...sqliteCallRows(db),
    query: (sql, args) =>
      whenFree(() => {
        const st = statement(sql);
        return st.reader ? st.all(...bind(args)) : (st.run(...bind(args)), []);
      }),
    execute: (sql, args) => whenFree(() => statement(sql).run(...bind(args)).changes),
    // Stored as Prisma does, ISO text with +00:00: the event's `at` is the same instant in Z form.
    events: async (sessionId, afterSeq, upToSeq, limit) =>
      (
        (await whenFree(() => events.all(sessionId, afterSeq, upToSeq, limit))) as {
          seq: number;
          payload: string;
          createdAt: string;
        }[]
      ).map(
        (r) =>
          Object.assign(JSON.parse(r.payload) as object, {
            seq: r.seq,
            sessionId,
            at: new Date(r.createdAt).toISOString(),
          }) as SessionEvent,
      ),
    async begin(b) {
      try {
        return await whenFree(() => begin.immediate(b));
      } catch (err) {
        if (err instanceof NoAttachment) return { ok: false, reason: "no_attachment", id: err.id };
        throw err;
      }
    },
    images: (sessionId, ids) =>
      whenFree(() =>
        ids.flatMap((id) => {
          const row = imageBytes.get(id, sessionId) as { mediaType: string; bytes: Buffer } | undefined;
          return row ? [{ id, mediaType: row.mediaType, base64: row.bytes.toString("base64") }] : [];
        }),
      ),
    conversation: async (sessionId) =>
      ((await whenFree(() => messages.all(sessionId))) as { role: string; content: string }[]).map((r) => ({
        role: r.role,
        content: JSON.parse(r.content),
      })),
    async openRequest(r) {
      const id = rowId();
      await whenFree(() => insertRequest.run(id, r.turnId, r.provider, r.model, r.attempt, now()));
      return id;
    },
    async closeRequest(id, r) {
      const u = r.usage;
      await whenFree(() =>
        closeRequest.run(
          r.stopReason,
          r.error,
          now(),
          u.inputTokens,
          u.outputTokens,
          u.cacheReadTokens,
          u.cacheWriteTokens,
          id,
        ),
      );
    },
    async addMessage(m) {
      const id = rowId();
      await whenFree(() =>
        insertMessage.run(id, m.sessionId, m.turnId, m.position, m.role, JSON.stringify(m.content), now()),
      );
      return id;
    },
    setMessageContent: async (id, content) =>
      void (await whenFree(() => messageContent.run(JSON.stringify(content), id))),
    turnUsage: async (turnId, u) =>
      void (await whenFree(() =>
        turnUsage.run(u.inputTokens, u.outputTokens, u.cacheReadTokens, u.cacheWriteTokens, turnId),
      )),
    async end(e) {
      const u = e.usage;
      return whenFree(() =>
        end(
          e.turnId,
          e.instanceId ?? null,
          e.sessionId,
          [
            e.status,
            e.stopReason,
            e.error,
            now(),
            u.inputTokens,
            u.outputTokens,
            u.cacheReadTokens,
            u.cacheWriteTokens,
          ],
          e.sessionStatus,
        ),
      );
    },
    close: async () => void db.close(),
  };
}
