// Who may call the orgs router (format: server/auth/authorize-table.ts). Everyone signed in sees
// their orgs and the active org's members, switches among their orgs and makes new ones; owners
// and admins invite and manage invitations; changing roles and removing follow the org rules
// (services/orgs-rules.ts: an admin may promote or remove a member, never touch owners or
// admins); a member id or invitation of another org is not found. Rows that change members use
// a fresh member or invitation per cell, so no subject's own role changes under the table.
import { randomBytes } from "node:crypto";
import {
  ADMINS_OF_RESOURCE,
  defineAccess,
  ORG_ADMINS,
  PUBLIC,
  SIGNED_IN,
  type AccessFixture,
} from "../../auth/authorize-table";
import { hashToken } from "../../auth/crypto";
import { orgsRouter } from "./orgs";

/** A new member (role member) of the org under test: its membership id. */
async function freshMember(fx: AccessFixture): Promise<string> {
  const user = await fx.db.user.create({ data: { email: `m-${fx.unique()}@access.invalid`, name: "Fresh member" } });
  return (await fx.db.membership.create({ data: { userId: user.id, orgId: fx.orgId, role: "member" } })).id;
}

/** A pending invitation of the org under test for an address nobody has: its link token and id. */
async function freshInvitation(fx: AccessFixture): Promise<{ token: string; id: string }> {
  const token = randomBytes(24).toString("base64url");
  const row = await fx.db.invitation.create({
    data: {
      id: hashToken(token),
      orgId: fx.orgId,
      email: `i-${fx.unique()}@access.invalid`,
      role: "member",
      inviterId: fx.users.owner,
      expiresAt: new Date(Date.now() + 3_600_000),
    },
  });
  return { token, id: row.id };
}

const OTHER_ORGS_ID_NOT_FOUND = { ...ADMINS_OF_RESOURCE, otherOrg: "NOT_FOUND" } as const;

export default defineAccess(orgsRouter, {
  mine: { expect: SIGNED_IN, note: "anyone signed in: their own orgs" },
  switch: {
    expect: { ...SIGNED_IN, otherOrg: "FORBIDDEN" },
    input: (fx) => ({ orgId: fx.orgId }),
    note: "members of the org switched to",
  },
  create: {
    expect: SIGNED_IN,
    input: (fx) => ({ name: `Org ${fx.unique()}` }),
    note: "anyone signed in (becomes its owner)",
  },
  members: { expect: SIGNED_IN, note: "members of the active org" },
  changeRole: {
    expect: OTHER_ORGS_ID_NOT_FOUND,
    input: async (fx) => ({ memberId: await freshMember(fx), role: "admin" }),
    note: "owners; admins on members (never owners/admins, never to owner)",
  },
  remove: {
    expect: OTHER_ORGS_ID_NOT_FOUND,
    input: async (fx) => ({ memberId: await freshMember(fx) }),
    note: "owners; admins remove members only",
  },
  // The other org's: only its owner is a member, and she is its last owner (refused as such).
  leave: {
    expect: { ...SIGNED_IN, owner: "FORBIDDEN", admin: "FORBIDDEN", member: "FORBIDDEN" },
    input: (fx) => ({ orgId: fx.otherOrgId }),
    note: "members of that org (not its last owner)",
  },
  invite: {
    expect: ORG_ADMINS,
    input: (fx) => ({ email: `new-${fx.unique()}@access.invalid`, role: "member" }),
    note: "org owners and admins",
  },
  invitations: { expect: ORG_ADMINS, note: "org owners and admins" },
  revokeInvitation: {
    expect: OTHER_ORGS_ID_NOT_FOUND,
    input: async (fx) => ({ invitationId: (await freshInvitation(fx)).id }),
    note: "owners and admins of the invitation's org",
  },
  invitation: {
    expect: PUBLIC,
    input: async (fx) => ({ token: (await freshInvitation(fx)).token }),
    note: "whoever holds the link",
  },
  // The link is for an address none of the subjects has.
  accept: {
    expect: { ...SIGNED_IN, owner: "FORBIDDEN", admin: "FORBIDDEN", member: "FORBIDDEN", otherOrg: "FORBIDDEN" },
    input: async (fx) => ({ token: (await freshInvitation(fx)).token }),
    note: "the person with the invited email",
  },
});
