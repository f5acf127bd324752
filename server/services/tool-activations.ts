// Where a session's deferred-tool activations live: Session.activatedTools, the ordered list
// tool_search built up. Reloaded after a restart so the catalog's tail, and with it the prompt
// cache prefix and which deferred tools are callable, is what it was.
import type { Db } from "../db";
import type { ToolSessionsOptions } from "../tools/sessions";

export function toolActivationStore(db: Db): Required<Pick<ToolSessionsOptions, "loadActivated" | "saveActivated">> {
  return {
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
