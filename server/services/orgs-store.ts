// The org service's writes: one transaction per change, which first takes the org's lock (a
// no-op write to its Org row: a row lock on PostgreSQL held to the commit, the database's write
// lock on SQLite), so two changes to one org's members never interleave. Every rule is then
// judged on rows read after the lock: two owners demoting each other at once leave one owner,
// and an admin demoted a moment ago no longer acts as one. The audit row is written in the same
// transaction, so a change and its record stand or fall together (kill -9 included).
import type { DirectDb } from "../db";
import type { Prisma } from "../db/generated/sqlite/client";
import type { Role } from "./orgs-rules";
import { isRole } from "./orgs-rules";
import { auditRow } from "./audit";

export type OrgErrorCode = "NOT_FOUND" | "FORBIDDEN" | "BAD_REQUEST" | "CONFLICT" | "PRECONDITION_FAILED";

export class OrgError extends Error {
  constructor(
    message: string,
    readonly code: OrgErrorCode,
  ) {
    super(message);
  }
}

/** What a transaction callback gets: the interactive transaction's client. */
export type Tx = Prisma.TransactionClient;

export interface MemberRow {
  id: string;
  userId: string;
  orgId: string;
  role: Role;
}

/**
 * Runs `work` in a transaction holding `orgId`'s lock. Needs a client that runs interactive
 * transactions (not the server's query thread, which runs batches only).
 */
export async function inOrgLock<T>(db: DirectDb, orgId: string, work: (tx: Tx) => Promise<T>): Promise<T> {
  return db.$transaction(
    async (tx) => {
      const locked = await tx.$executeRaw`UPDATE "Org" SET "slug" = "slug" WHERE "id" = ${orgId}`;
      if (locked === 0) throw new OrgError("No such org.", "NOT_FOUND");
      return work(tx);
    },
    { maxWait: 10_000, timeout: 15_000 },
  );
}

const toMember = (row: { id: string; userId: string; orgId: string; role: string }): MemberRow => ({
  id: row.id,
  userId: row.userId,
  orgId: row.orgId,
  // A role written by something else (a hand edit, a newer version) counts as the least.
  role: isRole(row.role) ? row.role : "member",
});

/** The person's membership of the org as it is now, or FORBIDDEN. */
export async function membershipOf(tx: Tx, userId: string, orgId: string): Promise<MemberRow> {
  const row = await tx.membership.findUnique({ where: { userId_orgId: { userId, orgId } } });
  if (!row) throw new OrgError("You are not a member of this org.", "FORBIDDEN");
  return toMember(row);
}

/** A membership of the org by its id, or NOT_FOUND (a membership of another org is not found). */
export async function memberById(tx: Tx, orgId: string, memberId: string): Promise<MemberRow> {
  const row = await tx.membership.findFirst({ where: { id: memberId, orgId } });
  if (!row) throw new OrgError("No such member in this org.", "NOT_FOUND");
  return toMember(row);
}

export const ownerCount = (tx: Tx, orgId: string) => tx.membership.count({ where: { orgId, role: "owner" } });

export interface AuditRow {
  orgId: string;
  actorId: string;
  action: string;
  target?: string;
  detail?: Record<string, unknown>;
}

/** The audit event of a change (services/audit.ts's row), in the change's transaction. */
export async function audit(tx: Tx, row: AuditRow): Promise<void> {
  await tx.auditEvent.create(auditRow(row));
}

/**
 * Revokes the share links `userId` made on the org's sessions, in the transaction that ends their
 * membership: a link is its maker's grant, and a server killed -9 after that commit must not
 * leave it working. Answers their ids (their viewers are dropped after the commit).
 */
export async function revokeLinksOf(tx: Tx, userId: string, orgId: string): Promise<string[]> {
  const rows = await tx.shareLink.findMany({
    where: { createdById: userId, revokedAt: null, session: { orgId } },
    select: { id: true, sessionId: true },
  });
  if (rows.length === 0) return [];
  await tx.shareLink.updateMany({
    where: { id: { in: rows.map((r) => r.id) }, revokedAt: null },
    data: { revokedAt: new Date() },
  });
  await tx.auditEvent.createMany({
    data: rows.map(
      (r) =>
        auditRow({
          orgId,
          sessionId: r.sessionId,
          actorId: null,
          action: "share.revoked",
          target: `share:${r.id}`,
          detail: { reason: "maker left the org", createdBy: userId },
        }).data,
    ),
  });
  return rows.map((r) => r.id);
}
