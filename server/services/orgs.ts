// Organizations and their members: the person's orgs and the active one, the member list with
// what the asker may do to each, role changes, removal, leaving, new orgs, switching. Who may do
// what is server/services/orgs-rules.ts; every change runs in one transaction holding the org's
// lock with its audit row (orgs-store.ts). Invitations are services/orgs-invitations.ts.
// A change that takes rights away (removal, leaving, a lower role) ends the person's open sockets
// in that org at once, on every server instance (`closeSockets`): their pages reconnect as what
// they now are, or are refused. The active org lives in the person's sign-in (better-auth's
// session, `activateOrg`); with accounts off there is one person and one org, and switching,
// creating orgs and inviting say that accounts are needed.
import { randomBytes } from "node:crypto";
import type { DirectDb } from "../db";
import type { Actor } from "./types";
import {
  assignableRoles,
  LAST_OWNER,
  leavesNoOwner,
  mayRemove,
  removalRefusal,
  roleChangeRefusal,
  type Role,
} from "./orgs-rules";
import { audit, inOrgLock, memberById, membershipOf, OrgError, ownerCount, revokeLinksOf } from "./orgs-store";
import { createInvitations, type InvitationDeps } from "./orgs-invitations";
import { sessionStopChores } from "./runner-chores";

export { OrgError } from "./orgs-store";

export interface OrgSummary {
  id: string;
  name: string;
  slug: string;
  role: Role;
}

export interface MemberSummary {
  id: string;
  userId: string;
  email: string;
  name: string;
  role: Role;
  joinedAt: string;
  you: boolean;
  /** Roles the asker may give this member now (the last owner keeps hers: none). */
  roles: Role[];
  removable: boolean;
}

/** Who to disconnect: the person's open sockets (IDE, terminals, preview) in that org. */
export interface SocketTarget {
  userId: string;
  orgId: string;
}

export interface OrgServiceDeps extends Omit<InvitationDeps, "db"> {
  /** A client that runs interactive transactions (the org lock needs one). */
  db: DirectDb;
  /** Ends the person's open sockets in the org on every server instance. */
  closeSockets?(target: SocketTarget, reason: string): Promise<void> | void;
  /** Stops what the person's agent still runs in the org once they are no longer in it (orgs-work.ts). */
  stopWork?(target: SocketTarget, revokedLinks: string[], stoppedSessions: string[]): Promise<unknown>;
  /** Makes `orgId` the active org of the actor's sign-in (default: their better-auth session
   *  row's activeOrganizationId, which the next request reads; its cookie cache is off). */
  activateOrg?(actor: Actor, orgId: string): Promise<void>;
}

export const NEEDS_ACCOUNTS =
  "Quiver runs without accounts (one local person): create the first account at /signup to have teammates and several orgs.";

export const ONLY_ORG = "This is your only org: create or join another before you leave it.";

const NAME_MAX = 80;

export function createOrgService(deps: OrgServiceDeps) {
  const { db } = deps;
  const disconnect = async (target: SocketTarget, reason: string) => {
    // A failure to reach other instances must not undo a change already committed; their
    // sockets are also refused at the next check of who they are.
    try {
      await deps.closeSockets?.(target, reason);
    } catch (err) {
      deps.log?.(`closing sockets of ${target.userId} in ${target.orgId} failed: ${(err as Error).message}`);
    }
  };
  // A member gone from the org: their sockets close and their agent's turns there stop.
  // Their share links were revoked with the membership (revokeLinksOf): their viewers go here.
  const gone = async (target: SocketTarget, reason: string, ended: { links: string[]; sessions: string[] }) => {
    await disconnect(target, reason);
    try {
      await deps.stopWork?.(target, ended.links, ended.sessions);
    } catch (err) {
      deps.log?.(`stopping the turns of ${target.userId} in ${target.orgId} failed: ${(err as Error).message}`);
    }
  };
  const invitations = createInvitations({ ...deps, db });
  const accounts = async () => Boolean(await deps.accountsOn?.());
  const activateOrg =
    deps.activateOrg ??
    (async (actor: Actor, orgId: string) => {
      if (!actor.authSessionId) throw new OrgError(NEEDS_ACCOUNTS, "PRECONDITION_FAILED");
      await db.authSession.updateMany({
        where: { id: actor.authSessionId, userId: actor.userId },
        data: { activeOrganizationId: orgId },
      });
    });

  return {
    invitations,

    /** The person's orgs, the active one marked by `activeOrgId`. */
    async mine(
      actor: Actor,
    ): Promise<{ me: { email: string; name: string }; activeOrgId: string; orgs: OrgSummary[]; accounts: boolean }> {
      const [user, rows] = await Promise.all([
        db.user.findUnique({ where: { id: actor.userId }, select: { email: true, name: true } }),
        db.membership.findMany({
          where: { userId: actor.userId },
          include: { org: true },
          orderBy: { createdAt: "asc" },
          take: 500,
        }),
      ]);
      const orgs = rows.map((m) => ({ id: m.orgId, name: m.org.name, slug: m.org.slug, role: m.role as Role }));
      return {
        me: { email: user?.email ?? "", name: user?.name ?? "" },
        activeOrgId: actor.orgId,
        orgs,
        accounts: await accounts(),
      };
    },

    /** The active org's members, with what the asker may do to each. */
    async members(actor: Actor): Promise<MemberSummary[]> {
      const rows = await db.membership.findMany({
        where: { orgId: actor.orgId },
        include: { user: { select: { email: true, name: true } } },
        orderBy: { createdAt: "asc" },
        take: 1000,
      });
      const me = rows.find((m) => m.userId === actor.userId);
      if (!me) throw new OrgError("You are not a member of this org.", "FORBIDDEN");
      const owners = rows.filter((m) => m.role === "owner").length;
      const myRole = me.role as Role;
      return rows.map((m) => {
        const role = m.role as Role;
        const self = m.userId === actor.userId;
        const lastOwner = leavesNoOwner(role, undefined, owners);
        return {
          id: m.id,
          userId: m.userId,
          email: m.user.email,
          name: m.user.name,
          role,
          joinedAt: m.createdAt.toISOString(),
          you: self,
          roles: lastOwner ? [] : assignableRoles(myRole, role, self),
          removable: !self && !lastOwner && mayRemove(myRole, role),
        };
      });
    },

    async changeRole(actor: Actor, memberId: string, to: Role): Promise<MemberSummary["role"]> {
      const change = await inOrgLock(db, actor.orgId, async (tx) => {
        const me = await membershipOf(tx, actor.userId, actor.orgId);
        const target = await memberById(tx, actor.orgId, memberId);
        if (target.role === to) return null;
        const refused = roleChangeRefusal(me.role, target.role, to, me.id === target.id);
        if (refused) throw new OrgError(refused, "FORBIDDEN");
        if (leavesNoOwner(target.role, to, await ownerCount(tx, actor.orgId)))
          throw new OrgError(LAST_OWNER, "CONFLICT");
        await tx.membership.update({ where: { id: target.id }, data: { role: to } });
        await audit(tx, {
          orgId: actor.orgId,
          actorId: actor.userId,
          action: "org.role_changed",
          target: `member:${target.userId}`,
          detail: { from: target.role, to },
        });
        return { target, from: target.role };
      });
      // Rights taken away end at once; new rights come with the next request or connection.
      if (change && rank(to) < rank(change.from))
        await disconnect({ userId: change.target.userId, orgId: actor.orgId }, `role changed to ${to}`);
      return to;
    },

    /** Removes someone else from the active org (oneself: `leave`). */
    async remove(actor: Actor, memberId: string): Promise<void> {
      const removed = await inOrgLock(db, actor.orgId, async (tx) => {
        const me = await membershipOf(tx, actor.userId, actor.orgId);
        const target = await memberById(tx, actor.orgId, memberId);
        if (target.id === me.id) throw new OrgError("To leave the org yourself, use Leave.", "BAD_REQUEST");
        const refused = removalRefusal(me.role, target.role);
        if (refused) throw new OrgError(refused, "FORBIDDEN");
        if (leavesNoOwner(target.role, undefined, await ownerCount(tx, actor.orgId)))
          throw new OrgError(LAST_OWNER, "CONFLICT");
        await tx.membership.delete({ where: { id: target.id } });
        await audit(tx, {
          orgId: actor.orgId,
          actorId: actor.userId,
          action: "org.member_removed",
          target: `member:${target.userId}`,
          detail: { role: target.role },
        });
        const sessions = await sessionStopChores(tx, target.userId, actor.orgId);
        return { target, links: await revokeLinksOf(tx, target.userId, actor.orgId), sessions };
      });
      await gone({ userId: removed.target.userId, orgId: actor.orgId }, "removed from the org", removed);
    },

    /**
     * Leaves an org; the last owner cannot, nor can a person leave their only org (they would
     * have nowhere to work). Leaving the active org makes their oldest other org active.
     */
    async leave(actor: Actor, orgId: string): Promise<{ activeOrgId: string | null }> {
      const ended = await inOrgLock(db, orgId, async (tx) => {
        const me = await membershipOf(tx, actor.userId, orgId);
        if (leavesNoOwner(me.role, undefined, await ownerCount(tx, orgId))) throw new OrgError(LAST_OWNER, "CONFLICT");
        // The person's row is locked too: leaving two orgs at once still leaves one.
        await tx.$executeRaw`UPDATE "User" SET "email" = "email" WHERE "id" = ${actor.userId}`;
        if ((await tx.membership.count({ where: { userId: actor.userId } })) <= 1)
          throw new OrgError(ONLY_ORG, "CONFLICT");
        await tx.membership.delete({ where: { id: me.id } });
        await audit(tx, {
          orgId,
          actorId: actor.userId,
          action: "org.member_left",
          target: `member:${actor.userId}`,
          detail: { role: me.role },
        });
        const sessions = await sessionStopChores(tx, actor.userId, orgId);
        return { links: await revokeLinksOf(tx, actor.userId, orgId), sessions };
      });
      let activeOrgId: string | null = actor.orgId === orgId ? null : actor.orgId;
      if (activeOrgId === null) {
        const next = await db.membership.findFirst({ where: { userId: actor.userId }, orderBy: { createdAt: "asc" } });
        if (next && (await accounts())) {
          await activateOrg(actor, next.orgId);
          activeOrgId = next.orgId;
        }
      }
      await gone({ userId: actor.userId, orgId }, "left the org", ended);
      return { activeOrgId };
    },

    /** A new org with the actor as its owner (not made active: `switch` does that). */
    async create(actor: Actor, name: string): Promise<OrgSummary> {
      if (!(await accounts())) throw new OrgError(NEEDS_ACCOUNTS, "PRECONDITION_FAILED");
      const clean = name.replace(/\s+/g, " ").trim();
      if (!clean || clean.length > NAME_MAX)
        throw new OrgError(`An org's name is 1 to ${NAME_MAX} characters.`, "BAD_REQUEST");
      const slug = `${
        clean
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, "-")
          .replace(/^-|-$/g, "")
          .slice(0, 40) || "org"
      }-${randomBytes(4).toString("hex")}`;
      const org = await db.$transaction(async (tx) => {
        const row = await tx.org.create({ data: { name: clean, slug } });
        await tx.membership.create({ data: { userId: actor.userId, orgId: row.id, role: "owner" } });
        await audit(tx, {
          orgId: row.id,
          actorId: actor.userId,
          action: "org.created",
          target: `org:${row.id}`,
          detail: { name: clean },
        });
        return row;
      });
      return { id: org.id, name: org.name, slug: org.slug, role: "owner" };
    },

    /**
     * Accepts an invitation (`invitations.accept`) and makes its org the person's active one.
     * `actor`: the signed-in person as they are now (their active org, if they have one).
     */
    async join(actor: Actor, token: string) {
      const joined = await invitations.accept(actor, token);
      if (joined.orgId !== actor.orgId && (await accounts())) {
        await activateOrg(actor, joined.orgId);
        if (actor.orgId) await disconnect({ userId: actor.userId, orgId: actor.orgId }, "switched to another org");
      }
      return joined;
    },

    /**
     * Makes `orgId` the active org of the person's sign-in. Their sockets opened in the old org
     * are closed so every open page reconnects acting in the new one.
     */
    async switch(actor: Actor, orgId: string): Promise<OrgSummary> {
      const row = await db.membership.findUnique({
        where: { userId_orgId: { userId: actor.userId, orgId } },
        include: { org: true },
      });
      if (!row) throw new OrgError("You are not a member of that org.", "FORBIDDEN");
      const summary: OrgSummary = { id: orgId, name: row.org.name, slug: row.org.slug, role: row.role as Role };
      if (orgId === actor.orgId) return summary;
      if (!(await accounts())) throw new OrgError(NEEDS_ACCOUNTS, "PRECONDITION_FAILED");
      await activateOrg(actor, orgId);
      await db.auditEvent.create({
        data: {
          orgId,
          actorId: actor.userId,
          action: "org.switched",
          target: `org:${orgId}`,
          detail: { from: actor.orgId },
        },
      });
      await disconnect({ userId: actor.userId, orgId: actor.orgId }, "switched to another org");
      return summary;
    },
  };
}

const rank = (role: Role) => ({ owner: 3, admin: 2, member: 1 })[role];

export type OrgService = ReturnType<typeof createOrgService>;
