// A server killed -9 just after a member's removal (or their leaving) is committed, before its
// after-steps run (org-leave-crash-child.ts, a real process): the share links the person made in
// the org no longer open, with their audit rows, since they are revoked in the same transaction
// as the membership (orgs-store.ts revokeLinksOf). Before, they were revoked after the commit, and
// a kill in between left a gone member's links working for good.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { runUntilStopped } from "../testing/stopped-child";
import { seedSession } from "../testing/pipeline";
import { createShareService } from "./shares";
import type { Actor } from "./types";

/** Runs the child until it stopped after the commit, then kills it -9. */
async function crashAfterCommit(url: string, actor: Actor, action: string): Promise<void> {
  await (
    await runUntilStopped("server/services/org-leave-crash-child.ts", [url, JSON.stringify(actor), action])
  ).kill9();
}

describe.each(testDatabases())("a server killed -9 once a member is gone from the org, on %s", (provider) => {
  const t = useTestDb(provider);

  /** An org with its owner, and a member with a session of their own: the member's links on it
   *  and on the owner's session, and the owner's own link. */
  async function seed() {
    const { db } = t.current;
    const { org, session: ownerSession, actor: owner } = await seedSession(db);
    const user = await db.user.create({
      data: { email: `m-${Math.random().toString(36).slice(2)}@example.com`, name: "Max" },
    });
    const membership = await db.membership.create({ data: { userId: user.id, orgId: org.id, role: "admin" } });
    const mine = await db.session.create({
      data: { title: "m", ownerId: user.id, orgId: org.id, workspace: "/tmp/m" },
    });
    const shares = createShareService(db);
    const member: Actor = { userId: user.id, orgId: org.id, role: "admin" };
    const links = {
      own: await shares.create(member, mine.id),
      others: await shares.create(member, ownerSession.id),
      owners: await shares.create(owner as Actor, ownerSession.id),
    };
    return { db, shares, owner: owner as Actor, member, memberId: membership.id, links };
  }

  it.each(["removed by an owner", "leaving"])("%s: the person's links are revoked, others' are not", async (how) => {
    const { db, shares, owner, member, memberId, links } = await seed();
    if (how === "leaving") {
      // One may not leave one's only org.
      const other = await db.org.create({ data: { slug: `o-${Math.random().toString(36).slice(2)}`, name: "O" } });
      await db.membership.create({ data: { userId: member.userId, orgId: other.id, role: "owner" } });
      await crashAfterCommit(t.current.url, member, `leave:${member.orgId}`);
    } else await crashAfterCommit(t.current.url, owner, `remove:${memberId}`);
    expect(await db.membership.count({ where: { userId: member.userId, orgId: member.orgId } })).toBe(0);
    expect(await shares.resolveToken(links.own.token)).toEqual({ ok: false, reason: "revoked" });
    expect(await shares.resolveToken(links.others.token)).toEqual({ ok: false, reason: "revoked" });
    expect(await shares.resolveToken(links.owners.token)).toMatchObject({ ok: true });
    const audit = await db.auditEvent.findMany({ where: { action: "share.revoked", orgId: member.orgId } });
    expect(audit.map((a) => a.target).sort()).toEqual([`share:${links.others.id}`, `share:${links.own.id}`].sort());
  });
});
