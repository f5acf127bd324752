// A turn acts with its session's owner's rights (it runs commands, answers itself in Auto mode,
// spends the org's model account), so before each model request it checks that the owner is
// still a member of the session's org. Removing a member stops their turns at once
// (services/orgs-work.ts, on whichever instance runs them); this check is what holds when that
// stop never arrives: the server that removed them killed right after the commit, or a peer's
// cancel lost on its way. A step already under way finishes; no further one starts.
import type { Db } from "../db";

/** Why the turn may not go on, or undefined while its owner is a member of the session's org. */
export async function ownerGone(db: Db, sessionId: string): Promise<string | undefined> {
  const session = await db.session.findUnique({ where: { id: sessionId }, select: { ownerId: true, orgId: true } });
  if (!session) return "The turn stopped: its session no longer exists.";
  const member = await db.membership.findUnique({
    where: { userId_orgId: { userId: session.ownerId, orgId: session.orgId } },
    select: { id: true },
  });
  return member ? undefined : "The turn stopped: the session's owner is no longer a member of this org.";
}
