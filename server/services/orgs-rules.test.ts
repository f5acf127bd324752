// The org rules table, cell by cell: who may give which role to whom, remove whom, invite as
// what, and the last owner.
import { describe, expect, it } from "vitest";
import {
  assignableRoles,
  invitableRoles,
  leavesNoOwner,
  mayChangeRole,
  mayRemove,
  removalRefusal,
  roleChangeRefusal,
  ROLES,
  type Role,
} from "./orgs-rules";

describe("org rules", () => {
  it("lets owners give any role to anyone, admins move members to admin only, members nothing", () => {
    const allowed: string[] = [];
    for (const actor of ROLES)
      for (const target of ROLES)
        for (const to of ROLES) {
          if (mayChangeRole(actor, target, to, false)) allowed.push(`${actor}: ${target}->${to}`);
        }
    expect(allowed.sort()).toEqual(
      [
        "owner: owner->admin",
        "owner: owner->member",
        "owner: admin->owner",
        "owner: admin->member",
        "owner: member->owner",
        "owner: member->admin",
        "admin: member->admin",
      ].sort(),
    );
  });

  it("lets a person step down but never up", () => {
    expect(assignableRoles("owner", "owner", true)).toEqual(["admin", "member"]);
    expect(assignableRoles("admin", "admin", true)).toEqual(["member"]);
    expect(assignableRoles("member", "member", true)).toEqual([]);
    expect(mayChangeRole("admin", "admin", "owner", true)).toBe(false);
    expect(roleChangeRefusal("admin", "admin", "owner", true)).toBe("You cannot give yourself a higher role.");
  });

  it("says why a change is refused", () => {
    expect(roleChangeRefusal("admin", "owner", "member", false)).toMatch(/Only owners can change an owner's role/);
    expect(roleChangeRefusal("admin", "member", "owner", false)).toMatch(/Only owners can make someone an owner/);
    expect(roleChangeRefusal("admin", "admin", "member", false)).toMatch(/Only owners can change an admin's role/);
    expect(roleChangeRefusal("member", "member", "admin", false)).toMatch(/Only org owners and admins/);
    expect(roleChangeRefusal("owner", "admin", "member", false)).toBeUndefined();
  });

  it("lets owners remove anyone and admins remove members only", () => {
    const cells = ROLES.flatMap((actor) => ROLES.map((target) => [actor, target] as [Role, Role]));
    expect(cells.filter(([a, t]) => mayRemove(a, t)).map(([a, t]) => `${a}>${t}`)).toEqual([
      "owner>owner",
      "owner>admin",
      "owner>member",
      "admin>member",
    ]);
    expect(removalRefusal("admin", "admin")).toMatch(/Only owners can remove an admin/);
    expect(removalRefusal("admin", "owner")).toMatch(/Only owners can remove an owner/);
  });

  it("lets owners invite with any role and admins as admin or member", () => {
    expect(invitableRoles("owner")).toEqual(["owner", "admin", "member"]);
    expect(invitableRoles("admin")).toEqual(["admin", "member"]);
    expect(invitableRoles("member")).toEqual([]);
  });

  it("keeps the last owner", () => {
    expect(leavesNoOwner("owner", "admin", 1)).toBe(true);
    expect(leavesNoOwner("owner", undefined, 1)).toBe(true);
    expect(leavesNoOwner("owner", "admin", 2)).toBe(false);
    expect(leavesNoOwner("owner", "owner", 1)).toBe(false);
    expect(leavesNoOwner("admin", undefined, 1)).toBe(false);
  });
});
