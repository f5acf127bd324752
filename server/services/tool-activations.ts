// Where a session's deferred-tool activations live: Session.activatedTools, the ordered list
// tool_search built up. Reloaded after a restart so the catalog's tail, and with it the prompt
// cache prefix and which deferred tools are callable, is what it was. The model of the session's
// first request, kept in its ModelRequest rows, fixes its edit tools (tools/edit-tools.ts).
// With the database's provider named, both reads (once per session a server serves) are plain
// SQL, which the query thread runs on its driver instead of compiling Prisma's in WebAssembly.
import type { Db, DbProvider } from "../db";
import { parseJsonText } from "../db/json-text";
import type { ToolSessionsOptions } from "../tools/sessions";

const FIRST_MODEL: Record<DbProvider, string> = {
  sqlite: `SELECT r."model" FROM "ModelRequest" r JOIN "Turn" t ON t."id" = r."turnId" WHERE t."sessionId" = ? ORDER BY r."startedAt" ASC, r."id" ASC LIMIT 1`,
  postgresql: `SELECT r."model" FROM "ModelRequest" r JOIN "Turn" t ON t."id" = r."turnId" WHERE t."sessionId" = $1 ORDER BY r."startedAt" ASC, r."id" ASC LIMIT 1`,
};
const ACTIVATED: Record<DbProvider, string> = {
  sqlite: `SELECT "activatedTools" FROM "Session" WHERE "id" = ?`,
  postgresql: `SELECT "activatedTools" FROM "Session" WHERE "id" = $1`,
};

/** The stored list's names; anything else (no row, a corrupt column) is no activation. */
function names(list: unknown): string[] {
  if (typeof list === "string") list = parseJsonText(list, () => []);
  return Array.isArray(list) ? list.filter((n): n is string => typeof n === "string") : [];
}

export function toolActivationStore(
  db: Db,
  provider?: DbProvider,
): Required<Pick<ToolSessionsOptions, "loadActivated" | "saveActivated" | "firstModel">> {
  return {
    async firstModel(sessionId) {
      if (provider) {
        const rows = (await db.$queryRawUnsafe(FIRST_MODEL[provider], sessionId)) as { model: string }[];
        return rows[0]?.model;
      }
      const first = await db.modelRequest.findFirst({
        where: { turn: { sessionId } },
        orderBy: [{ startedAt: "asc" }, { id: "asc" }],
        select: { model: true },
      });
      return first?.model;
    },
    async loadActivated(sessionId) {
      if (provider) {
        const rows = (await db.$queryRawUnsafe(ACTIVATED[provider], sessionId)) as { activatedTools: unknown }[];
        return names(rows[0]?.activatedTools);
      }
      const row = await db.session.findUnique({ where: { id: sessionId }, select: { activatedTools: true } });
      return names(row?.activatedTools);
    },
    async saveActivated(sessionId, activated) {
      // updateMany: a session deleted meanwhile is not an error worth a log line
      await db.session.updateMany({ where: { id: sessionId }, data: { activatedTools: [...activated] } });
    },
  };
}
