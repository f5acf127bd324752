// Who in an org may do what to whom: the one table of the org rules (server/services/orgs.ts
// applies them inside the transaction that makes the change, so a rule is judged on the rows as
// they are when the change is written, never on a stale copy). Roles rank owner > admin > member.
//
//  - An owner may invite with any role, give any member any role (owners included) and remove
//    anyone.
//  - An admin may invite admins and members, promote a member to admin, and remove members. An
//    admin never touches an owner or another admin (demoting or removing an admin is an owner's
//    decision) and never makes anyone an owner.
//  - A member manages nobody.
//  - Everyone may leave an org, and an admin may step down to member; an owner may step down to
//    admin or member.
//  - Whatever the rule above says, the org's last owner can neither leave, nor be removed, nor be
//    given another role (checked against the org's owners at the moment of the change).
export const ROLES = ["owner", "admin", "member"] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1 };

export const isRole = (v: unknown): v is Role => typeof v === "string" && (ROLES as readonly string[]).includes(v);

/** The roles `actor` may give in an invitation. */
export function invitableRoles(actor: Role): Role[] {
  if (actor === "owner") return ["owner", "admin", "member"];
  if (actor === "admin") return ["admin", "member"];
  return [];
}

export const mayInvite = (actor: Role, role: Role): boolean => invitableRoles(actor).includes(role);

/** May manage invitations at all (list, revoke). */
export const mayManageInvitations = (actor: Role): boolean => actor !== "member";

/**
 * The roles `actor` may set on a member whose role is `target` (`self`: the actor's own
 * membership). Excludes the target's current role; the last-owner rule is not part of it.
 */
export function assignableRoles(actor: Role, target: Role, self: boolean): Role[] {
  let out: Role[];
  if (self)
    out = ROLES.filter((r) => RANK[r] <= RANK[actor]); // one may step down, never up
  else if (actor === "owner") out = [...ROLES];
  else if (actor === "admin" && target === "member") out = ["admin", "member"];
  else out = [];
  return out.filter((r) => r !== target);
}

export const mayChangeRole = (actor: Role, target: Role, to: Role, self: boolean): boolean =>
  assignableRoles(actor, target, self).includes(to);

/** Removing someone else (oneself: `leave`). */
export function mayRemove(actor: Role, target: Role): boolean {
  if (actor === "owner") return true;
  return actor === "admin" && target === "member";
}

/**
 * True when a change would leave the org without an owner: the member whose role is `target`
 * stops being an owner (`to` is another role, or undefined for leaving or removal) while
 * `owners` counts every owner, that member included.
 */
export function leavesNoOwner(target: Role, to: Role | undefined, owners: number): boolean {
  return target === "owner" && to !== "owner" && owners <= 1;
}

/** Why a change is refused, in words a person reads (undefined: allowed by the role table). */
export function roleChangeRefusal(actor: Role, target: Role, to: Role, self: boolean): string | undefined {
  if (target === to) return undefined;
  if (mayChangeRole(actor, target, to, self)) return undefined;
  if (actor === "member") return "Only org owners and admins can change roles.";
  if (self) return "You cannot give yourself a higher role.";
  if (to === "owner") return "Only owners can make someone an owner.";
  if (target === "owner") return "Only owners can change an owner's role.";
  return "Only owners can change an admin's role.";
}

export function removalRefusal(actor: Role, target: Role): string | undefined {
  if (mayRemove(actor, target)) return undefined;
  if (actor === "member") return "Only org owners and admins can remove members.";
  return target === "owner" ? "Only owners can remove an owner." : "Only owners can remove an admin.";
}

export const LAST_OWNER =
  "The org's last owner cannot leave, be removed or be given another role: make someone else an owner first.";
