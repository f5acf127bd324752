// What a person who leaves an org, or is removed from it, leaves running there: their agent's
// turns. A turn acts with its session's creator's rights (it runs commands, answers itself in
// Auto mode, spends the org's model account); once that person is no longer a member, nobody
// may act in those sessions, so the turns stop (on whichever instance runs them) and their
// open cards are cancelled, as Stop would. The sessions stay: the org's admins may read them.
import type { Db } from "../db";
import type { Services } from "./types";

export interface WorkOf {
  userId: string;
  orgId: string;
}

/** Stops the person's running turns in the org; answers the sessions stopped. */
export async function stopWorkOf(
  deps: { db: Db; engine: Pick<Services["engine"], "cancel">; approvals: Pick<Services["approvals"], "cancelSession"> },
  who: WorkOf,
): Promise<string[]> {
  const sessions = await deps.db.session.findMany({
    where: { ownerId: who.userId, orgId: who.orgId, turns: { some: { status: "running" } } },
    select: { id: true },
  });
  for (const { id } of sessions) {
    await deps.engine.cancel(id);
    await deps.approvals.cancelSession(id);
  }
  return sessions.map((s) => s.id);
}
