// Share links on both databases: who may create, list and revoke them, what a token resolves
// to (unknown, expired, revoked), that only the token's hash is stored, and the audit trail;
// and that a person gone from an org takes every link they made there with them.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/hub";
import { hashToken } from "../auth/crypto";
import { createShareService, ShareError } from "./shares";
import type { Actor } from "./types";

describe.each(testDatabases())("share links on %s", (provider) => {
  const t = useTestDb(provider);

  async function setup(clock = { t: Date.now() }) {
    const db = t.current.db;
    const s = await seedSession(db);
    const owner: Actor = { userId: s.userId, orgId: s.orgId, role: "owner" };
    const revoked: string[] = [];
    const shares = createShareService(db, { now: () => new Date(clock.t), onRevoked: (id) => revoked.push(id) });
    /** Another person of the same org with `role`. */
    const colleague = async (role: Actor["role"]): Promise<Actor> => {
      const user = await db.user.create({
        data: { email: `c-${randomBytes(4).toString("hex")}@test.invalid`, name: "Colleague" },
      });
      await db.membership.create({ data: { userId: user.id, orgId: s.orgId, role } });
      return { userId: user.id, orgId: s.orgId, role };
    };
    return { db, shares, owner, sessionId: s.sessionId, revoked, clock, colleague };
  }

  it("creates a link whose token resolves to the session, storing only its hash, and audits it", async () => {
    const { db, shares, owner, sessionId } = await setup();
    const link = await shares.create(owner, sessionId, {});
    expect(link.token).toMatch(/^[A-Za-z0-9_-]{22}$/); // 16 random bytes
    expect(link).toMatchObject({ sessionId, state: "active", expiresAt: null, revokedAt: null });
    const row = await db.shareLink.findUniqueOrThrow({ where: { id: link.id } });
    expect(row.tokenHash).toBe(hashToken(link.token));
    expect(JSON.stringify(row)).not.toContain(link.token);
    expect(await shares.resolveToken(link.token)).toEqual({ ok: true, linkId: link.id, sessionId, expiresAt: null });
    expect(await shares.checkLink(link.id, sessionId)).toMatchObject({ ok: true });
    // A cookie naming the link with another session is not that link.
    expect(await shares.checkLink(link.id, "other")).toEqual({ ok: false, reason: "unknown" });
    const audit = await db.auditEvent.findMany({ where: { sessionId, action: "share.created" } });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorId: owner.userId, target: `share:${link.id}` });
    expect(await shares.list(owner, sessionId)).toEqual([expect.objectContaining({ id: link.id, state: "active" })]);
    expect(await shares.list(owner, sessionId)).not.toContainEqual(
      expect.objectContaining({ token: expect.anything() }),
    );
  });

  it("answers unknown and malformed tokens as unknown", async () => {
    const { shares } = await setup();
    expect(await shares.resolveToken("A".repeat(22))).toEqual({ ok: false, reason: "unknown" });
    expect(await shares.resolveToken("../../etc")).toEqual({ ok: false, reason: "unknown" });
    expect(await shares.resolveToken("")).toEqual({ ok: false, reason: "unknown" });
  });

  it("expires a link at its expiry and refuses bad expiries", async () => {
    const clock = { t: Date.now() };
    const { shares, owner, sessionId } = await setup(clock);
    const link = await shares.create(owner, sessionId, { expiresInMinutes: 60 });
    expect(new Date(link.expiresAt!).getTime()).toBe(clock.t + 3_600_000);
    clock.t += 59 * 60_000;
    expect(await shares.resolveToken(link.token)).toMatchObject({ ok: true });
    clock.t += 60_000;
    expect(await shares.resolveToken(link.token)).toEqual({ ok: false, reason: "expired" });
    expect(await shares.ended([link.id])).toEqual([{ id: link.id, reason: "expired" }]);
    expect((await shares.list(owner, sessionId))[0].state).toBe("expired");
    for (const bad of [0, -5, 1.5, 10_000_000]) {
      await expect(shares.create(owner, sessionId, { expiresInMinutes: bad })).rejects.toMatchObject({
        code: "BAD_REQUEST",
      });
    }
  });

  it("revokes at once (told to onRevoked), idempotently, with an audit event", async () => {
    const { db, shares, owner, sessionId, revoked } = await setup();
    const keep = await shares.create(owner, sessionId);
    const link = await shares.create(owner, sessionId);
    const after = await shares.revoke(owner, link.id);
    expect(after.state).toBe("revoked");
    expect(revoked).toEqual([link.id]);
    expect(await shares.resolveToken(link.token)).toEqual({ ok: false, reason: "revoked" });
    expect(await shares.ended([link.id, keep.id, "gone"])).toEqual([
      { id: link.id, reason: "revoked" },
      { id: "gone", reason: "unknown" },
    ]);
    await shares.revoke(owner, link.id);
    expect(revoked).toEqual([link.id]);
    expect(
      await db.auditEvent.count({ where: { sessionId, action: "share.revoked", target: `share:${link.id}` } }),
    ).toBe(1);
    await expect(shares.revoke(owner, "no-such-link")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("lets the session's owner and org admins manage links, not other members or other orgs", async () => {
    const { shares, owner, sessionId, colleague } = await setup();
    const member = await colleague("member");
    const admin = await colleague("admin");
    const link = await shares.create(owner, sessionId);
    await expect(shares.create(member, sessionId)).rejects.toBeInstanceOf(ShareError);
    await expect(shares.create(member, sessionId)).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(shares.list(member, sessionId)).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(shares.revoke(member, link.id)).rejects.toMatchObject({ code: "FORBIDDEN" });
    const other = await seedSession(t.current.db);
    const stranger: Actor = { userId: other.userId, orgId: other.orgId, role: "owner" };
    await expect(shares.create(stranger, sessionId)).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(shares.revoke(stranger, link.id)).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await shares.create(admin, sessionId)).state).toBe("active");
    expect((await shares.revoke(admin, link.id)).state).toBe("revoked");
    await expect(shares.create(owner, "no-such-session")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("revokes every link a person made in the org, on others' sessions too, and no one else's", async () => {
    const { db, shares, owner, sessionId, revoked, colleague } = await setup();
    const admin = await colleague("admin");
    const adminsSession = (
      await db.session.create({ data: { title: "admin's", ownerId: admin.userId, orgId: admin.orgId, workspace: "" } })
    ).id;
    const mine = [await shares.create(admin, adminsSession), await shares.create(admin, sessionId)];
    const already = await shares.create(admin, sessionId);
    await shares.revoke(owner, already.id);
    const others = await shares.create(owner, sessionId);
    // The same person's link in another org of theirs stays.
    const elsewhere = await seedSession(db);
    await db.membership.create({ data: { userId: admin.userId, orgId: elsewhere.orgId, role: "admin" } });
    const theirsElsewhere = await shares.create({ ...admin, orgId: elsewhere.orgId }, elsewhere.sessionId);
    revoked.length = 0;

    expect((await shares.revokeMadeBy(admin)).sort()).toEqual(mine.map((l) => l.id).sort());
    expect(revoked.sort()).toEqual(mine.map((l) => l.id).sort());
    for (const l of mine) expect(await shares.resolveToken(l.token)).toEqual({ ok: false, reason: "revoked" });
    expect(await shares.resolveToken(others.token)).toMatchObject({ ok: true });
    expect(await shares.resolveToken(theirsElsewhere.token)).toMatchObject({ ok: true });
    const audit = await db.auditEvent.findMany({ where: { action: "share.revoked", target: `share:${mine[1].id}` } });
    expect(audit).toEqual([expect.objectContaining({ actorId: null, orgId: admin.orgId, sessionId })]);
    expect(await shares.revokeMadeBy(admin)).toEqual([]);
  });

  it("takes back a link made by someone no longer in the org (removed while making it)", async () => {
    const { db, shares, sessionId, revoked, colleague } = await setup();
    const admin = await colleague("admin");
    await db.membership.deleteMany({ where: { userId: admin.userId, orgId: admin.orgId } });
    await expect(shares.create(admin, sessionId)).rejects.toMatchObject({ code: "FORBIDDEN" });
    const rows = await db.shareLink.findMany({ where: { createdById: admin.userId } });
    expect(rows).toEqual([expect.objectContaining({ revokedAt: expect.any(Date) })]);
    expect(revoked).toEqual([rows[0].id]);
  });

  it("reads a link as revoked once its maker is no longer a member, though no revocation was written", async () => {
    const { db, shares, owner, sessionId, colleague } = await setup();
    const admin = await colleague("admin");
    const theirs = await shares.create(admin, sessionId);
    const owners = await shares.create(owner, sessionId);
    // The membership ends and the server is killed before anything else is written.
    await db.membership.deleteMany({ where: { userId: admin.userId, orgId: admin.orgId } });
    expect(await db.shareLink.findUniqueOrThrow({ where: { id: theirs.id } })).toMatchObject({ revokedAt: null });
    expect(await shares.resolveToken(theirs.token)).toEqual({ ok: false, reason: "revoked" });
    expect(await shares.checkLink(theirs.id, sessionId)).toEqual({ ok: false, reason: "revoked" });
    expect(await shares.ended([theirs.id, owners.id, "gone"])).toEqual([
      { id: theirs.id, reason: "revoked" },
      { id: "gone", reason: "unknown" },
    ]);
    expect(await shares.resolveToken(owners.token)).toMatchObject({ ok: true });
    // Invited back: a link from their earlier membership stays dead; one made now works.
    await db.membership.create({ data: { userId: admin.userId, orgId: admin.orgId, role: "admin" } });
    expect(await shares.resolveToken(theirs.token)).toEqual({ ok: false, reason: "revoked" });
    const again = await shares.create(admin, sessionId);
    expect(await shares.resolveToken(again.token)).toMatchObject({ ok: true });
  });
});
