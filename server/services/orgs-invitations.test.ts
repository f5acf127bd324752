// Invitations on both databases: who may invite with which role, the link working once and
// until it expires, only for the invited email, revoking, re-inviting, only the token's hash
// stored, the mail, two accepts at once, and the audit rows.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { hashToken } from "../auth/crypto";
import type { Role } from "./orgs-rules";
import { createInvitations, linkOrigin, MAX_PENDING } from "./orgs-invitations";
import { OrgError } from "./orgs-store";

describe.each(testDatabases())("org invitations on %s", (provider) => {
  const t = useTestDb(provider);

  async function setup(opts: { accounts?: boolean; failMail?: boolean } = {}) {
    const db = t.current.db;
    const clock = { t: Date.now() };
    const org = await db.org.create({ data: { slug: `org-${randomBytes(4).toString("hex")}`, name: "Acme" } });
    const mails: Array<{ to: string; subject: string; text: string }> = [];
    const inv = createInvitations({
      db,
      now: () => new Date(clock.t),
      accountsOn: () => opts.accounts ?? true,
      sendMail: async (m) => {
        if (opts.failMail) throw new Error("connection refused");
        mails.push(m);
      },
    });
    const person = async (role: Role | null, email = `p-${randomBytes(5).toString("hex")}@test.invalid`) => {
      const user = await db.user.create({ data: { email, name: `Person ${email}` } });
      if (role) await db.membership.create({ data: { userId: user.id, orgId: org.id, role } });
      return { userId: user.id, orgId: org.id, role: role ?? "member", email };
    };
    const isMember = async (userId: string) =>
      (await db.membership.findUnique({ where: { userId_orgId: { userId, orgId: org.id } } }))?.role;
    return { db, org, inv, person, isMember, clock, mails };
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

  it("invites by a link that works once, for the invited email, storing only the token's hash", async () => {
    const { db, org, inv, person, isMember, mails } = await setup();
    const owner = await person("owner");
    const made = await inv.create(
      owner,
      { email: "  New.Person@Example.COM ", role: "admin" },
      "http://quiver.test:3000",
    );
    expect(made.token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(made.path).toBe(`/invite/${made.token}`);
    expect(made.invitation).toMatchObject({ email: "new.person@example.com", role: "admin", state: "pending" });
    const row = await db.invitation.findUniqueOrThrow({ where: { id: made.invitation.id } });
    expect(row.id).toBe(hashToken(made.token));
    expect(JSON.stringify(await db.invitation.findMany())).not.toContain(made.token);
    expect(JSON.stringify(await db.auditEvent.findMany())).not.toContain(made.token);
    // Seven days by default.
    expect(row.expiresAt.getTime() - Date.now()).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect(made.mailed).toBe(true);
    expect(mails).toEqual([
      expect.objectContaining({ to: "new.person@example.com", subject: expect.stringContaining("Acme") }),
    ]);
    expect(mails[0].text).toContain(`http://quiver.test:3000/invite/${made.token}`);
    expect(await inv.info(made.token)).toMatchObject({
      orgName: "Acme",
      email: "new.person@example.com",
      role: "admin",
      state: "pending",
    });

    const wrong = await person(null, "someone.else@example.com");
    await refused(
      inv.accept(wrong, made.token),
      "FORBIDDEN",
      /for new\.person@example\.com; you are signed in as someone\.else@example\.com/,
    );
    expect(await isMember(wrong.userId)).toBeUndefined();

    // Emails compare without case.
    const invitee = await person(null, "New.Person@example.com");
    expect(await inv.accept(invitee, made.token)).toEqual({
      orgId: org.id,
      orgName: "Acme",
      role: "admin",
      alreadyMember: false,
    });
    expect(await isMember(invitee.userId)).toBe("admin");
    await refused(inv.accept(invitee, made.token), "BAD_REQUEST", /already been used/);
    expect(await inv.info(made.token)).toMatchObject({ state: "accepted" });
    const actions = (await db.auditEvent.findMany({ where: { orgId: org.id }, orderBy: { createdAt: "asc" } })).map(
      (a) => [a.action, a.actorId],
    );
    expect(actions).toEqual([
      ["org.invitation_created", owner.userId],
      ["org.invitation_accepted", invitee.userId],
    ]);
  });

  it("ends a link at its expiry", async () => {
    const { inv, person, isMember, clock } = await setup();
    const owner = await person("owner");
    const made = await inv.create(owner, { email: "late@example.com", role: "member", expiresInHours: 1 });
    const late = await person(null, "late@example.com");
    clock.t += 3_600_000;
    await refused(inv.accept(late, made.token), "BAD_REQUEST", /expired/);
    expect(await isMember(late.userId)).toBeUndefined();
    expect(await inv.info(made.token)).toMatchObject({ state: "expired" });
    // Still listed (so an admin sees it expired), as expired.
    expect((await inv.list(owner)).map((i) => i.state)).toEqual(["expired"]);
    await refused(inv.create(owner, { email: "x@example.com", role: "member", expiresInHours: 0 }), "BAD_REQUEST");
    await refused(inv.create(owner, { email: "x@example.com", role: "member", expiresInHours: 721 }), "BAD_REQUEST");
  });

  it("revokes a link, and a new invitation of the same email replaces the pending one", async () => {
    const { inv, person, isMember, db } = await setup();
    const admin = await person("admin");
    const first = await inv.create(admin, { email: "twice@example.com", role: "member" });
    const second = await inv.create(admin, { email: "twice@example.com", role: "admin" });
    const invitee = await person(null, "twice@example.com");
    await refused(inv.accept(invitee, first.token), "BAD_REQUEST", /revoked/);
    expect((await inv.list(admin)).map((i) => i.id)).toEqual([second.invitation.id]);
    expect(await inv.revoke(admin, second.invitation.id)).toMatchObject({ state: "revoked" });
    await refused(inv.accept(invitee, second.token), "BAD_REQUEST", /revoked/);
    expect(await isMember(invitee.userId)).toBeUndefined();
    expect(await inv.list(admin)).toEqual([]);
    expect(await db.auditEvent.count({ where: { action: "org.invitation_revoked", actorId: admin.userId } })).toBe(1);
    await refused(inv.revoke(admin, "nope"), "NOT_FOUND");
  });

  it("lets admins invite admins and members, owners anyone, members nobody", async () => {
    const { inv, person } = await setup();
    const owner = await person("owner");
    const admin = await person("admin");
    const member = await person("member");
    await refused(inv.create(admin, { email: "boss@example.com", role: "owner" }), "FORBIDDEN", /admin or member/);
    await refused(
      inv.create(member, { email: "pal@example.com", role: "member" }),
      "FORBIDDEN",
      /Only org owners and admins/,
    );
    await refused(inv.list(member), "FORBIDDEN");
    expect((await inv.create(admin, { email: "helper@example.com", role: "admin" })).invitation.role).toBe("admin");
    const boss = await inv.create(owner, { email: "boss@example.com", role: "owner" });
    await refused(inv.revoke(member, boss.invitation.id), "FORBIDDEN");
    // Someone already in the org is not invited.
    await refused(
      inv.create(owner, { email: member.email.toUpperCase(), role: "admin" }),
      "CONFLICT",
      /already a member/,
    );
    await refused(inv.create(owner, { email: "not an email", role: "member" }), "BAD_REQUEST");
  });

  it("cannot be read or revoked from another org", async () => {
    const { inv, person } = await setup();
    const owner = await person("owner");
    const made = await inv.create(owner, { email: "mine@example.com", role: "member" });
    const other = await setup();
    const otherOwner = await other.person("owner");
    await refused(other.inv.revoke(otherOwner, made.invitation.id), "NOT_FOUND");
    expect(await other.inv.list(otherOwner)).toEqual([]);
  });

  it("joins once when the same person accepts twice at the same moment", async () => {
    const { inv, person, db, org } = await setup();
    const owner = await person("owner");
    const made = await inv.create(owner, { email: "racer@example.com", role: "member" });
    const racer = await person(null, "racer@example.com");
    const results = await Promise.allSettled([
      inv.accept(racer, made.token),
      inv.accept(racer, made.token),
      inv.accept(racer, made.token),
    ]);
    const joined = results.filter((r) => r.status === "fulfilled" && !r.value.alreadyMember);
    expect(joined).toHaveLength(1);
    expect(await db.membership.count({ where: { orgId: org.id, userId: racer.userId } })).toBe(1);
    expect(await db.auditEvent.count({ where: { orgId: org.id, action: "org.invitation_accepted" } })).toBe(1);
  });

  it("answers unknown and malformed links as not valid", async () => {
    const { inv, person } = await setup();
    const someone = await person(null);
    await refused(inv.info("A".repeat(32)), "NOT_FOUND");
    await refused(inv.info("../../etc/passwd"), "NOT_FOUND");
    await refused(inv.accept(someone, "x"), "NOT_FOUND");
    // The stored id (the hash) is not a link.
    const owner = await person("owner");
    const made = await inv.create(owner, { email: "h@example.com", role: "member" });
    await refused(inv.info(made.invitation.id), "NOT_FOUND");
  });

  it("needs accounts, bounds pending invitations, and reports a mail that failed", async () => {
    const off = await setup({ accounts: false });
    await refused(
      off.inv.create(await off.person("owner"), { email: "a@example.com", role: "member" }),
      "PRECONDITION_FAILED",
      /accounts/,
    );
    const { inv, person, db, org } = await setup({ failMail: true });
    const owner = await person("owner");
    const made = await inv.create(owner, { email: "m@example.com", role: "member" }, "http://q.test");
    expect(made).toMatchObject({ mailed: false, mailError: "connection refused" });
    // The invitation stands; its link is in the answer to copy.
    expect(made.invitation.state).toBe("pending");
    await db.invitation.createMany({
      data: Array.from({ length: MAX_PENDING - 1 }, (_, i) => ({
        id: `fill-${org.id}-${i}`,
        orgId: org.id,
        email: `f${i}@example.com`,
        role: "member",
        inviterId: owner.userId,
        expiresAt: new Date(Date.now() + 86_400_000),
      })),
    });
    await refused(inv.create(owner, { email: "one-more@example.com", role: "member" }), "CONFLICT", /at most 100/);
  });
});

describe("a mailed link's base", () => {
  it("is the page's origin only when this server answers to its host", () => {
    const hosts = ["localhost", "127.0.0.1", "::1", "quiver.example.com"];
    expect(linkOrigin("http://quiver.example.com:3000", hosts)).toBe("http://quiver.example.com:3000");
    expect(linkOrigin("https://QUIVER.example.com", hosts)).toBe("https://quiver.example.com");
    expect(linkOrigin("http://[::1]:3000", hosts)).toBe("http://[::1]:3000");
    expect(linkOrigin("https://evil.example", hosts)).toBeUndefined();
    expect(linkOrigin("http://quiver.example.com.evil.example", hosts)).toBeUndefined();
    expect(linkOrigin("http://quiver.example.com/path", hosts)).toBeUndefined();
    expect(linkOrigin("javascript://quiver.example.com", hosts)).toBeUndefined();
    expect(linkOrigin("http://user@quiver.example.com", hosts)).toBeUndefined();
    expect(linkOrigin(undefined, hosts)).toBeUndefined();
    expect(linkOrigin("https://anything.example", ["*"])).toBe("https://anything.example");
  });
});
