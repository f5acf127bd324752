// The org service on both databases: the member list and what the asker may do, role changes
// and removals within the rules (judged on the rows as they are, not on the asker's stale
// role), the last owner under a race, leaving, switching, and the audit rows and socket closes
// each change makes.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import type { Actor } from "./types";
import type { Role } from "./orgs-rules";
import { createOrgService, OrgError, type SocketTarget } from "./orgs";

describe.each(testDatabases())("org members on %s", (provider) => {
  const t = useTestDb(provider);

  async function setup() {
    const db = t.current.db;
    const tag = randomBytes(4).toString("hex");
    const org = await db.org.create({ data: { slug: `org-${tag}`, name: `Org ${tag}` } });
    const closed: Array<SocketTarget & { reason: string }> = [];
    const activated: Array<{ userId: string; orgId: string }> = [];
    const orgs = createOrgService({
      db,
      accountsOn: () => true,
      closeSockets: (target, reason) => void closed.push({ ...target, reason }),
      activateOrg: async (actor, orgId) => void activated.push({ userId: actor.userId, orgId }),
    });
    /** A person in the org with `role` (their actor, and their membership id). */
    const person = async (role: Role, orgId = org.id): Promise<Actor & { memberId: string }> => {
      const user = await db.user.create({
        data: { email: `p-${randomBytes(5).toString("hex")}@test.invalid`, name: `${role} person` },
      });
      const m = await db.membership.create({ data: { userId: user.id, orgId, role } });
      return { userId: user.id, orgId, role, memberId: m.id };
    };
    const roleOf = async (memberId: string) => (await db.membership.findUnique({ where: { id: memberId } }))?.role;
    const audits = (action: string) =>
      db.auditEvent.findMany({ where: { orgId: org.id, action }, orderBy: { createdAt: "asc" } });
    return { db, org, orgs, person, roleOf, closed, activated, audits };
  }

  const refused = async (work: Promise<unknown>, code: string, message?: RegExp) => {
    const err = await work.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OrgError);
    expect((err as OrgError).code).toBe(code);
    if (message) expect((err as OrgError).message).toMatch(message);
  };

  it("lists the members with what the asker may do to each", async () => {
    const { orgs, person } = await setup();
    const owner = await person("owner");
    const admin = await person("admin");
    const member = await person("member");
    const asAdmin = await orgs.members(admin);
    const row = (id: string) => asAdmin.find((m) => m.id === id)!;
    expect(row(owner.memberId)).toMatchObject({ role: "owner", roles: [], removable: false, you: false });
    expect(row(admin.memberId)).toMatchObject({ role: "admin", roles: ["member"], removable: false, you: true });
    expect(row(member.memberId)).toMatchObject({ role: "member", roles: ["admin"], removable: true });
    const asOwner = await orgs.members(owner);
    // The only owner: nothing may be done to her, not even by herself.
    expect(asOwner.find((m) => m.id === owner.memberId)).toMatchObject({ roles: [], removable: false });
    expect(asOwner.find((m) => m.id === admin.memberId)).toMatchObject({ roles: ["owner", "member"], removable: true });
    const asMember = await orgs.members(member);
    expect(asMember.every((m) => m.removable === false)).toBe(true);
    expect(asMember.find((m) => m.you)?.roles).toEqual([]);
  });

  it("keeps admins to members: promote and remove them, never touch owners or admins, never make owners", async () => {
    const { orgs, person, roleOf, closed, audits } = await setup();
    const owner = await person("owner");
    const admin = await person("admin");
    const admin2 = await person("admin");
    const member = await person("member");
    await refused(orgs.changeRole(admin, owner.memberId, "member"), "FORBIDDEN", /owner's role/);
    await refused(orgs.remove(admin, owner.memberId), "FORBIDDEN", /remove an owner/);
    await refused(orgs.changeRole(admin, admin2.memberId, "member"), "FORBIDDEN", /admin's role/);
    await refused(orgs.remove(admin, admin2.memberId), "FORBIDDEN", /remove an admin/);
    await refused(orgs.changeRole(admin, member.memberId, "owner"), "FORBIDDEN", /make someone an owner/);
    await refused(orgs.changeRole(admin, admin.memberId, "owner"), "FORBIDDEN", /higher role/);
    expect(closed).toEqual([]);
    expect(await roleOf(owner.memberId)).toBe("owner");
    expect(await roleOf(admin2.memberId)).toBe("admin");

    await orgs.changeRole(admin, member.memberId, "admin");
    expect(await roleOf(member.memberId)).toBe("admin");
    // A promotion takes nothing away: no socket is closed.
    expect(closed).toEqual([]);
    expect(await audits("org.role_changed")).toEqual([
      expect.objectContaining({
        actorId: admin.userId,
        target: `member:${member.userId}`,
        detail: { from: "member", to: "admin" },
      }),
    ]);

    const other = await person("member");
    await orgs.remove(admin, other.memberId);
    expect(await roleOf(other.memberId)).toBeUndefined();
    expect(closed).toEqual([{ userId: other.userId, orgId: owner.orgId, reason: "removed from the org" }]);
    expect(await audits("org.member_removed")).toEqual([
      expect.objectContaining({ actorId: admin.userId, target: `member:${other.userId}`, detail: { role: "member" } }),
    ]);
  });

  it("lets members manage nobody", async () => {
    const { orgs, person } = await setup();
    await person("owner");
    const member = await person("member");
    const other = await person("member");
    await refused(orgs.changeRole(member, other.memberId, "admin"), "FORBIDDEN");
    await refused(orgs.changeRole(member, member.memberId, "admin"), "FORBIDDEN");
    await refused(orgs.remove(member, other.memberId), "FORBIDDEN");
  });

  it("lets owners change and remove anyone, closing the sockets of whoever loses rights", async () => {
    const { orgs, person, roleOf, closed } = await setup();
    const owner = await person("owner");
    const admin = await person("admin");
    const member = await person("member");
    await orgs.changeRole(owner, admin.memberId, "member");
    expect(closed).toEqual([{ userId: admin.userId, orgId: owner.orgId, reason: "role changed to member" }]);
    await orgs.changeRole(owner, member.memberId, "owner");
    expect(await roleOf(member.memberId)).toBe("owner");
    expect(closed).toHaveLength(1);
    // Two owners now: one may remove the other.
    await orgs.remove(member, owner.memberId);
    expect(await roleOf(owner.memberId)).toBeUndefined();
    expect(closed[1]).toEqual({ userId: owner.userId, orgId: owner.orgId, reason: "removed from the org" });
  });

  it("judges on the rows, not on the asker's stale role: a demoted admin no longer acts as one", async () => {
    const { orgs, person, roleOf } = await setup();
    const owner = await person("owner");
    const admin = await person("admin");
    const member = await person("member");
    await orgs.changeRole(owner, admin.memberId, "member");
    // `admin` still says role admin (an actor made before the change).
    await refused(orgs.remove(admin, member.memberId), "FORBIDDEN");
    await refused(orgs.changeRole(admin, member.memberId, "admin"), "FORBIDDEN");
    expect(await roleOf(member.memberId)).toBe("member");
    // Removed from the org: refused outright.
    await orgs.remove(owner, admin.memberId);
    await refused(orgs.members(admin), "FORBIDDEN");
  });

  it("never reaches into another org by a member id", async () => {
    const { db, orgs, person, roleOf } = await setup();
    const owner = await person("owner");
    const elsewhere = await db.org.create({
      data: { slug: `else-${randomBytes(4).toString("hex")}`, name: "Elsewhere" },
    });
    const stranger = await person("member", elsewhere.id);
    await refused(orgs.changeRole(owner, stranger.memberId, "admin"), "NOT_FOUND");
    await refused(orgs.remove(owner, stranger.memberId), "NOT_FOUND");
    expect(await roleOf(stranger.memberId)).toBe("member");
  });

  it("keeps the last owner: she can neither step down, nor leave, nor be removed", async () => {
    const { orgs, person, roleOf, db } = await setup();
    const owner = await person("owner");
    const admin = await person("admin");
    // Another org, so leaving is not refused for being her only one.
    const spare = await db.org.create({ data: { slug: `spare-${randomBytes(4).toString("hex")}`, name: "Spare" } });
    await db.membership.create({ data: { userId: owner.userId, orgId: spare.id, role: "owner" } });
    await refused(orgs.changeRole(owner, owner.memberId, "admin"), "CONFLICT", /last owner/);
    await refused(orgs.leave(owner, owner.orgId), "CONFLICT", /last owner/);
    await refused(orgs.remove(admin, owner.memberId), "FORBIDDEN");
    expect(await roleOf(owner.memberId)).toBe("owner");
    // With a second owner she may step down.
    await orgs.changeRole(owner, admin.memberId, "owner");
    await orgs.changeRole(owner, owner.memberId, "admin");
    expect(await roleOf(owner.memberId)).toBe("admin");
    await refused(orgs.changeRole(admin, admin.memberId, "member"), "CONFLICT", /last owner/);
  });

  it("keeps one owner when two owners demote each other at the same moment", async () => {
    const { orgs, person, db } = await setup();
    for (let round = 0; round < 5; round++) {
      const a = await person("owner");
      const b = await person("owner");
      // Two owners of a fresh org each round.
      const org = await db.org.create({ data: { slug: `race-${randomBytes(5).toString("hex")}`, name: "Race" } });
      await db.membership.updateMany({ where: { id: { in: [a.memberId, b.memberId] } }, data: { orgId: org.id } });
      const A = { ...a, orgId: org.id };
      const B = { ...b, orgId: org.id };
      const results = await Promise.allSettled([
        orgs.changeRole(A, b.memberId, "member"),
        orgs.changeRole(B, a.memberId, "member"),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const failure = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      // The loser is refused as a non-owner (it was demoted first) or as the last owner.
      expect((failure.reason as OrgError).code).toMatch(/FORBIDDEN|CONFLICT/);
      expect(await db.membership.count({ where: { orgId: org.id, role: "owner" } })).toBe(1);
    }
  });

  it("lets a member leave, making their next org active; not the only org", async () => {
    const { orgs, person, db, activated, closed, audits } = await setup();
    await person("owner");
    const member = await person("member");
    await refused(orgs.leave(member, member.orgId), "CONFLICT", /only org/);
    const home = await db.org.create({ data: { slug: `home-${randomBytes(4).toString("hex")}`, name: "Home" } });
    await db.membership.create({ data: { userId: member.userId, orgId: home.id, role: "owner" } });
    expect(await orgs.leave(member, member.orgId)).toEqual({ activeOrgId: home.id });
    expect(activated).toEqual([{ userId: member.userId, orgId: home.id }]);
    expect(closed).toEqual([{ userId: member.userId, orgId: member.orgId, reason: "left the org" }]);
    expect(await audits("org.member_left")).toHaveLength(1);
    await refused(orgs.remove(member, member.memberId), "FORBIDDEN");
  });

  it("creates an org owned by its creator and switches to it, closing the old org's sockets", async () => {
    const { orgs, person, activated, closed, db } = await setup();
    const member = await person("member");
    const made = await orgs.create(member, "  Side   project ");
    expect(made).toMatchObject({ name: "Side project", role: "owner" });
    expect(made.slug).toMatch(/^side-project-[0-9a-f]{8}$/);
    expect((await orgs.mine(member)).orgs.map((o) => o.id)).toEqual([member.orgId, made.id]);
    await orgs.switch(member, made.id);
    expect(activated).toEqual([{ userId: member.userId, orgId: made.id }]);
    expect(closed).toEqual([{ userId: member.userId, orgId: member.orgId, reason: "switched to another org" }]);
    expect(await db.auditEvent.findMany({ where: { action: "org.switched", actorId: member.userId } })).toEqual([
      expect.objectContaining({ orgId: made.id, detail: { from: member.orgId } }),
    ]);
    // Not a member: refused, nothing activated.
    const stranger = await person(
      "owner",
      (await db.org.create({ data: { slug: `x-${randomBytes(4).toString("hex")}`, name: "X" } })).id,
    );
    await refused(orgs.switch(member, stranger.orgId), "FORBIDDEN");
    expect(activated).toHaveLength(1);
    await refused(orgs.create(member, " "), "BAD_REQUEST");
    await refused(orgs.create(member, "x".repeat(81)), "BAD_REQUEST");
  });

  it("switches by setting the active org of the person's own sign-in (better-auth session row) only", async () => {
    const { db, person } = await setup();
    const member = await person("member");
    const other = await person(
      "owner",
      (await db.org.create({ data: { slug: `o-${randomBytes(4).toString("hex")}`, name: "Other" } })).id,
    );
    await db.membership.create({ data: { userId: member.userId, orgId: other.orgId, role: "member" } });
    const device = (userId: string) =>
      db.authSession.create({
        data: {
          token: randomBytes(16).toString("hex"),
          userId,
          expiresAt: new Date(Date.now() + 86_400_000),
          activeOrganizationId: member.orgId,
        },
      });
    const mine = await device(member.userId);
    const theirs = await device(other.userId);
    const orgs = createOrgService({ db, accountsOn: async () => true });
    // Naming someone else's device changes nothing of theirs.
    await orgs.switch({ ...member, authSessionId: theirs.id }, other.orgId);
    expect((await db.authSession.findUniqueOrThrow({ where: { id: theirs.id } })).activeOrganizationId).toBe(
      member.orgId,
    );
    await orgs.switch({ ...member, authSessionId: mine.id }, other.orgId);
    expect((await db.authSession.findUniqueOrThrow({ where: { id: mine.id } })).activeOrganizationId).toBe(other.orgId);
    // The local owner (no sign-in) cannot switch.
    await refused(orgs.switch(member, other.orgId), "PRECONDITION_FAILED");
  });

  it("says accounts are needed to switch or create orgs while accounts are off", async () => {
    const { db, person } = await setup();
    const owner = await person("owner");
    const orgs = createOrgService({ db, accountsOn: () => false, activateOrg: async () => {} });
    await refused(orgs.create(owner, "Another"), "PRECONDITION_FAILED", /accounts/);
    expect((await orgs.mine(owner)).accounts).toBe(false);
    // Switching to the org one is in is no change and needs nothing.
    expect(await orgs.switch(owner, owner.orgId)).toMatchObject({ id: owner.orgId, role: "owner" });
  });
});
