// Invitations to an org: an owner or admin invites one email address with a role; the link
// (`/invite/<token>`, 192 random bits) is shown once to copy and mailed when a mail server is
// set. Only the token's hash is stored (it is the invitation's id), so the database never holds
// a working link. A link works once, until it expires (1 hour to 30 days, 7 by default), for the
// person whose account has the invited email (compared without case): a signed-in person with
// that email joins; someone new signs up through it with that email. Inviting an address again
// replaces its pending invitation. Accepting claims the invitation and makes the membership in
// one transaction under the org's lock, so two tabs accepting at once join once.
import { z } from "zod";
import type { DirectDb as Db } from "../db";
import { hashToken, newToken } from "../auth/crypto";
import type { Actor } from "./types";
import { invitableRoles, isRole, mayInvite, mayManageInvitations, type Role } from "./orgs-rules";
import { audit, inOrgLock, membershipOf, OrgError } from "./orgs-store";

export type InvitationState = "pending" | "expired" | "accepted" | "revoked";

export interface InvitationSummary {
  id: string;
  email: string;
  role: Role;
  state: InvitationState;
  expiresAt: string;
  createdAt: string;
  invitedBy: string;
}

/** What the holder of a link may see before accepting: enough to know what they join. */
export interface InvitationInfo {
  orgName: string;
  email: string;
  role: Role;
  state: InvitationState;
  expiresAt: string;
  invitedBy: string;
}

export interface InvitationDeps {
  db: Db;
  now?: () => Date;
  /** True once accounts are on: invitations need people who can sign in. */
  accountsOn?(): boolean | Promise<boolean>;
  /** Sends a mail (present when QUIVER_SMTP_URL is set). */
  sendMail?(mail: { to: string; subject: string; text: string }): Promise<void>;
  log?(line: string): void;
}

export const EXPIRY_HOURS = { min: 1, max: 30 * 24, default: 7 * 24 };
/** Pending invitations an org may have at once. */
export const MAX_PENDING = 100;
const TOKEN = /^[A-Za-z0-9_-]{32}$/;
const Email = z.string().trim().toLowerCase().pipe(z.email().max(254));

export const invitationPath = (token: string) => `/invite/${token}`;

/**
 * The base of a mailed link: the origin the inviting page was served from, if this server
 * answers to its host (the same list the Host header of every request is checked against), so
 * a mail never points at another site. Anything else: no mail, the link is only shown.
 */
export function linkOrigin(origin: string | undefined, allowedHosts: readonly string[]): string | undefined {
  if (!origin) return undefined;
  try {
    const url = new URL(origin);
    const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.origin !== origin.toLowerCase())
      return undefined;
    return allowedHosts.includes("*") || allowedHosts.map((h) => h.toLowerCase()).includes(host)
      ? url.origin
      : undefined;
  } catch {
    return undefined;
  }
}

type Row = {
  id: string;
  orgId: string;
  email: string;
  role: string;
  status: string;
  expiresAt: Date;
  createdAt: Date;
  inviter?: { name: string; email: string } | null;
};

export function createInvitations(deps: InvitationDeps) {
  const { db } = deps;
  const now = deps.now ?? (() => new Date());
  const stateOf = (row: Row): InvitationState =>
    row.status === "accepted"
      ? "accepted"
      : row.status !== "pending"
        ? "revoked"
        : row.expiresAt <= now()
          ? "expired"
          : "pending";
  const summary = (row: Row): InvitationSummary => ({
    id: row.id,
    email: row.email,
    role: isRole(row.role) ? row.role : "member",
    state: stateOf(row),
    expiresAt: row.expiresAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    invitedBy: row.inviter?.name || row.inviter?.email || "",
  });
  const byToken = (token: string) =>
    TOKEN.test(token)
      ? db.invitation.findUnique({ where: { id: hashToken(token) }, include: { inviter: true, org: true } })
      : Promise.resolve(null);

  return {
    /** A new invitation; the link is in the answer only (and in the mail). */
    async create(actor: Actor, input: { email: string; role: Role; expiresInHours?: number }, origin?: string) {
      const email = Email.safeParse(input.email);
      if (!email.success) throw new OrgError("That is not an email address.", "BAD_REQUEST");
      const hours = input.expiresInHours ?? EXPIRY_HOURS.default;
      if (!Number.isInteger(hours) || hours < EXPIRY_HOURS.min || hours > EXPIRY_HOURS.max) {
        throw new OrgError(`An invitation lasts ${EXPIRY_HOURS.min} to ${EXPIRY_HOURS.max} hours.`, "BAD_REQUEST");
      }
      const token = newToken(24);
      const row = await inOrgLock(db, actor.orgId, async (tx) => {
        const me = await membershipOf(tx, actor.userId, actor.orgId);
        if (!mayInvite(me.role, input.role)) {
          throw new OrgError(
            me.role === "member"
              ? "Only org owners and admins can invite."
              : `You can invite as ${invitableRoles(me.role).join(" or ")}.`,
            "FORBIDDEN",
          );
        }
        if (!(await deps.accountsOn?.()))
          throw new OrgError(
            "Invitations need accounts: create the first account at /signup, then invite teammates.",
            "PRECONDITION_FAILED",
          );
        if (await tx.membership.findFirst({ where: { orgId: actor.orgId, user: { email: email.data } } }))
          throw new OrgError(`${email.data} is already a member.`, "CONFLICT");
        const replaced = await tx.invitation.updateMany({
          where: { orgId: actor.orgId, email: email.data, status: "pending" },
          data: { status: "canceled" },
        });
        const pending = await tx.invitation.count({
          where: { orgId: actor.orgId, status: "pending", expiresAt: { gt: now() } },
        });
        if (pending >= MAX_PENDING)
          throw new OrgError(`An org has at most ${MAX_PENDING} pending invitations: revoke some first.`, "CONFLICT");
        const created = await tx.invitation.create({
          data: {
            id: hashToken(token),
            orgId: actor.orgId,
            email: email.data,
            role: input.role,
            status: "pending",
            inviterId: actor.userId,
            expiresAt: new Date(now().getTime() + hours * 3_600_000),
          },
          include: { inviter: true, org: true },
        });
        await audit(tx, {
          orgId: actor.orgId,
          actorId: actor.userId,
          action: "org.invitation_created",
          target: `invitation:${created.id}`,
          detail: {
            email: email.data,
            role: input.role,
            expiresAt: created.expiresAt.toISOString(),
            replaced: replaced.count,
          },
        });
        return created;
      });
      const path = invitationPath(token);
      let mailed = false;
      let mailError: string | undefined;
      if (deps.sendMail && origin) {
        try {
          await deps.sendMail({
            to: row.email,
            ...invitationMail(
              row.org.name,
              row.inviter?.name || row.inviter?.email || "A teammate",
              row.role,
              `${origin}${path}`,
              row.expiresAt,
            ),
          });
          mailed = true;
        } catch (err) {
          mailError = (err as Error).message;
          deps.log?.(`invitation mail to ${row.email} failed: ${mailError}`);
        }
      }
      return { invitation: summary(row), token, path, mailed, mailError };
    },

    /** The active org's pending invitations (expired ones too, until replaced or revoked). */
    async list(actor: Actor): Promise<InvitationSummary[]> {
      const me = await db.membership.findUnique({
        where: { userId_orgId: { userId: actor.userId, orgId: actor.orgId } },
      });
      if (!me || !isRole(me.role) || !mayManageInvitations(me.role))
        throw new OrgError("Only org owners and admins can see invitations.", "FORBIDDEN");
      const rows = await db.invitation.findMany({
        where: { orgId: actor.orgId, status: "pending" },
        include: { inviter: true },
        orderBy: { createdAt: "desc" },
        take: 200,
      });
      return rows.map(summary);
    },

    /** Revokes a pending invitation (again: no change). */
    async revoke(actor: Actor, id: string): Promise<InvitationSummary> {
      return inOrgLock(db, actor.orgId, async (tx) => {
        const me = await membershipOf(tx, actor.userId, actor.orgId);
        if (!mayManageInvitations(me.role))
          throw new OrgError("Only org owners and admins can revoke invitations.", "FORBIDDEN");
        const row = await tx.invitation.findFirst({ where: { id, orgId: actor.orgId }, include: { inviter: true } });
        if (!row) throw new OrgError("No such invitation.", "NOT_FOUND");
        if (row.status !== "pending") return summary(row);
        const updated = await tx.invitation.update({
          where: { id },
          data: { status: "canceled" },
          include: { inviter: true },
        });
        await audit(tx, {
          orgId: actor.orgId,
          actorId: actor.userId,
          action: "org.invitation_revoked",
          target: `invitation:${id}`,
          detail: { email: row.email, role: row.role },
        });
        return summary(updated);
      });
    },

    /** What a link is for, for the page that accepts it (anyone holding the link may ask). */
    async info(token: string): Promise<InvitationInfo> {
      const row = await byToken(token);
      if (!row) throw new OrgError("This invitation link is not valid.", "NOT_FOUND");
      const s = summary(row);
      return {
        orgName: row.org.name,
        email: s.email,
        role: s.role,
        state: s.state,
        expiresAt: s.expiresAt,
        invitedBy: s.invitedBy,
      };
    },

    /**
     * The signed-in person accepts a link: they become a member with the invited role, if their
     * account's email is the invited one. Already a member: nothing changes, the link stays unused.
     */
    async accept(
      person: { userId: string },
      token: string,
    ): Promise<{ orgId: string; orgName: string; role: Role; alreadyMember: boolean }> {
      const found = await byToken(token);
      if (!found) throw new OrgError("This invitation link is not valid.", "NOT_FOUND");
      return inOrgLock(db, found.orgId, async (tx) => {
        const row = await tx.invitation.findUniqueOrThrow({ where: { id: found.id } });
        const state = stateOf(row);
        if (state !== "pending") throw new OrgError(ENDED[state], "BAD_REQUEST");
        const user = await tx.user.findUnique({ where: { id: person.userId }, select: { email: true } });
        if (!user) throw new OrgError("Sign in to accept an invitation.", "FORBIDDEN");
        if (row.email !== user.email.trim().toLowerCase()) {
          throw new OrgError(
            `This invitation is for ${row.email}; you are signed in as ${user.email}. Sign out, then open the link again.`,
            "FORBIDDEN",
          );
        }
        const role: Role = isRole(row.role) ? row.role : "member";
        const existing = await tx.membership.findUnique({
          where: { userId_orgId: { userId: person.userId, orgId: row.orgId } },
        });
        if (existing)
          return { orgId: row.orgId, orgName: found.org.name, role: existing.role as Role, alreadyMember: true };
        const claimed = await tx.invitation.updateMany({
          where: { id: row.id, status: "pending" },
          data: { status: "accepted" },
        });
        if (claimed.count !== 1) throw new OrgError(ENDED.accepted, "BAD_REQUEST");
        await tx.membership.create({ data: { userId: person.userId, orgId: row.orgId, role } });
        await audit(tx, {
          orgId: row.orgId,
          actorId: person.userId,
          action: "org.invitation_accepted",
          target: `invitation:${row.id}`,
          detail: { email: row.email, role, invitedBy: row.inviterId },
        });
        return { orgId: row.orgId, orgName: found.org.name, role, alreadyMember: false };
      });
    },
  };
}

const ENDED: Record<Exclude<InvitationState, "pending">, string> = {
  expired: "This invitation has expired: ask for a new one.",
  accepted: "This invitation has already been used.",
  revoked: "This invitation was revoked.",
};

function invitationMail(orgName: string, inviter: string, role: string, url: string, expiresAt: Date) {
  return {
    subject: `${inviter} invited you to ${orgName} on Quiver`,
    text: `${inviter} invited you to join ${orgName} on Quiver as ${role === "member" ? "a member" : `an ${role}`}.\n\nOpen this link to join (it works once, until ${expiresAt.toUTCString()}):\n${url}\n\nIf you did not expect this, ignore this mail.\n`,
  };
}

export type Invitations = ReturnType<typeof createInvitations>;
