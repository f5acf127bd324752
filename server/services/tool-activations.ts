// Where a session's deferred-tool activations live: Session.activatedTools, the ordered list
// tool_search built up. Reloaded after a restart so the catalog's tail, and with it the prompt
// cache prefix and which deferred tools are callable, is what it was. The model of the session's
// first request, kept in its ModelRequest rows, fixes its edit tools (tools/edit-tools.ts).
import type { Db } from "../db";
import type { ToolSessionsOptions } from "../tools/sessions";

export function toolActivationStore(
  db: Db,
): Required<Pick<ToolSessionsOptions, "loadActivated" | "saveActivated" | "firstModel">> {
  return {
    async firstModel(sessionId) {
      const first = await db.modelRequest.findFirst({
        where: { turn: { sessionId } },
        orderBy: [{ startedAt: "asc" }, { id: "asc" }],
        select: { model: true },
      });
      return first?.model;
    },
    async loadActivated(sessionId) {
      const row = await db.session.findUnique({ where: { id: sessionId }, select: { activatedTools: true } });
      const list = row?.activatedTools;
      return Array.isArray(list) ? list.filter((n): n is string => typeof n === "string") : [];
    },
    async saveActivated(sessionId, activated) {
      // updateMany: a session deleted meanwhile is not an error worth a log line
      await db.session.updateMany({ where: { id: sessionId }, data: { activatedTools: [...activated] } });
    },
  };
}
