// What a person who leaves an org, or is removed from it, leaves running there: their agent's
// turns. A turn acts with its session's creator's rights (it runs commands, answers itself in
// Auto mode, spends the org's model account); once that person is no longer a member, nobody
// may act in those sessions, so the turns stop (on whichever instance runs them) and their
// open cards are cancelled, as Stop would (and a turn this stop never reaches ends before its
// next model request: engine/owner-check.ts). The sessions stay: the org's admins may read them.
// The share links they made in the org, also on sessions others own (a link is its maker's grant,
// not its session's), were revoked in the transaction that ended the membership (orgs-store.ts
// revokeLinksOf, so a kill -9 after it leaves none working); the viewers connected through them
// are dropped here, and any link made since is revoked. The commands their agent left running
// and their terminals are stopped on the runners (a RunnerChore per session, written with the
// membership's end: services/runner-chores.ts), at once where the runner is connected here.
import type { Db } from "../db";
import type { RunnerChores } from "./runner-chores";
import type { ShareService } from "./shares";
import type { Services } from "./types";

export interface WorkOf {
  userId: string;
  orgId: string;
}

/** Drops the viewers of the person's revoked links, revokes any other link of theirs in the org,
 *  stops their running turns there, and their sessions' commands on runners connected here
 *  (`stoppedSessions`: those given a chore with the membership's end); answers the turns' sessions. */
export async function stopWorkOf(
  deps: {
    db: Db;
    engine: Pick<Services["engine"], "cancel">;
    approvals: Pick<Services["approvals"], "cancelSession">;
    shares: Pick<ShareService, "revokeMadeBy" | "dropViewers">;
    chores?: Pick<RunnerChores, "sessionsStopped">;
  },
  who: WorkOf,
  revokedLinks: string[] = [],
  stoppedSessions: string[] = [],
): Promise<string[]> {
  deps.shares.dropViewers(revokedLinks);
  await deps.shares.revokeMadeBy(who);
  const sessions = await deps.db.session.findMany({
    where: { ownerId: who.userId, orgId: who.orgId, turns: { some: { status: "running" } } },
    select: { id: true },
  });
  for (const { id } of sessions) {
    await deps.engine.cancel(id);
    await deps.approvals.cancelSession(id);
  }
  await deps.chores?.sessionsStopped(stoppedSessions);
  return sessions.map((s) => s.id);
}
