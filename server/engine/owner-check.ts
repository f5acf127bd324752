// A turn acts with its session's owner's rights (it runs commands, answers itself in Auto mode,
// spends the org's model account), so before each model request it checks that the owner is
// still a member of the session's org. Removing a member stops their turns at once
// (services/orgs-work.ts, on whichever instance runs them); this check is what holds when that
// stop never arrives: the server that removed them killed right after the commit, or a peer's
// cancel lost on its way. A step already under way finishes; no further one starts.
// With the database's provider known, the check is one plain SQL read (about a tenth of the CPU
// of two Prisma queries, which it costs on every model request of every turn).
import type { Db, DbProvider } from "../db";

const OWNER_ROW = `SELECT s."id", m."id" AS "member" FROM "Session" s LEFT JOIN "Membership" m
  ON m."userId" = s."ownerId" AND m."orgId" = s."orgId" WHERE s."id" = `;
const PLACEHOLDER: Record<DbProvider, string> = { sqlite: "?", postgresql: "$1" };

/** Why the turn may not go on, or undefined while its owner is a member of the session's org. */
export async function ownerGone(db: Db, sessionId: string, provider?: DbProvider): Promise<string | undefined> {
  const found = provider ? await ownerRow(db, sessionId, provider) : await ownerModels(db, sessionId);
  if (!found) return "The turn stopped: its session no longer exists.";
  return found.member ? undefined : "The turn stopped: the session's owner is no longer a member of this org.";
}

async function ownerRow(db: Db, sessionId: string, provider: DbProvider) {
  const [row] = (await db.$queryRawUnsafe(OWNER_ROW + PLACEHOLDER[provider], sessionId)) as {
    member: string | null;
  }[];
  return row ? { member: row.member !== null } : undefined;
}

async function ownerModels(db: Db, sessionId: string) {
  const session = await db.session.findUnique({ where: { id: sessionId }, select: { ownerId: true, orgId: true } });
  if (!session) return undefined;
  const member = await db.membership.findUnique({
    where: { userId_orgId: { userId: session.ownerId, orgId: session.orgId } },
    select: { id: true },
  });
  return { member: member !== null };
}
