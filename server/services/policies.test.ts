import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { createPolicyService } from "./policies";
import { seedSession } from "../testing/pipeline";
import { appRouter } from "../api/root";
import type { Services } from "./types";

describe.each(testDatabases())("org policies on %s", (provider) => {
  const t = useTestDb(provider);

  it("versions rules, loads the newest, and audits who changed them", async () => {
    const { actor, org } = await seedSession(t.current.db, "admin");
    const svc = createPolicyService(t.current.db);
    expect(await svc.load(org.id)).toEqual({ ok: true, version: 0, rules: [] });
    const v1 = await svc.set(actor, [{ effect: "deny", command: "git push" }]);
    const v2 = await svc.set(actor, [
      { effect: "ask", tool: "shell" },
      { effect: "deny", host: "*.evil.com" },
    ]);
    expect([v1.version, v2.version]).toEqual([1, 2]);
    expect(await svc.load(org.id)).toMatchObject({
      ok: true,
      version: 2,
      rules: [{ effect: "ask" }, { effect: "deny" }],
    });
    expect((await svc.history(actor)).map((h) => h.version)).toEqual([2, 1]);
    const audits = await t.current.db.auditEvent.findMany({ where: { orgId: org.id, action: "policy.set" } });
    expect(audits).toHaveLength(2);
    expect(audits[0].actorId).toBe(actor.userId);
  });

  it("refuses bad rules with the rule's path, members, other orgs and stale versions", async () => {
    const { actor } = await seedSession(t.current.db, "owner");
    const svc = createPolicyService(t.current.db);
    await expect(svc.set(actor, [{ effect: "deny", tool: "x" }, { effect: "deny" }])).rejects.toThrow(
      /rules\[1\].*at least one of/,
    );
    await expect(svc.set({ ...actor, role: "member" }, [])).rejects.toThrow(/admins and owners/);
    await expect(svc.set(actor, [], { orgId: "another-org" })).rejects.toThrow(/your own org/);
    await svc.set(actor, [{ effect: "allow", tool: "read_*" }]);
    await expect(svc.set(actor, [], { expectedVersion: 0 })).rejects.toThrow(/changed meanwhile/);
    expect((await svc.set(actor, [], { expectedVersion: 1 })).version).toBe(2);
  });

  it("two admins saving at once both land, as consecutive versions", async () => {
    const { actor, org } = await seedSession(t.current.db, "admin");
    const svc = createPolicyService(t.current.db);
    await Promise.all([
      svc.set(actor, [{ effect: "deny", tool: "a" }]),
      svc.set(actor, [{ effect: "deny", tool: "b" }]),
    ]);
    const rows = await t.current.db.orgPolicy.findMany({ where: { orgId: org.id }, orderBy: { version: "asc" } });
    expect(rows.map((r) => r.version)).toEqual([1, 2]);
  });

  it("a stored policy that does not validate loads as failed (fail closed)", async () => {
    const { org } = await seedSession(t.current.db);
    await t.current.db.orgPolicy.create({ data: { orgId: org.id, version: 1, rules: { not: "a list" } } });
    const loaded = await createPolicyService(t.current.db).load(org.id);
    expect(loaded).toMatchObject({ ok: false });
    expect(!loaded.ok && loaded.error).toMatch(/version 1 is invalid/);
  });

  it("is reachable through the policies router, admins only for writes", async () => {
    const { actor } = await seedSession(t.current.db, "admin");
    const services = { policies: createPolicyService(t.current.db) } as unknown as Services;
    const admin = appRouter.createCaller({ services, actor });
    const member = appRouter.createCaller({ services, actor: { ...actor, role: "member" } });
    await admin.policies.set({ rules: [{ effect: "deny", command: "rm -rf" }] });
    expect(await member.policies.current()).toMatchObject({
      version: 1,
      rules: [{ effect: "deny", command: "rm -rf" }],
      canEdit: false,
    });
    expect(await admin.policies.current()).toMatchObject({ version: 1, canEdit: true });
    await expect(member.policies.set({ rules: [] })).rejects.toThrow(/owners and admins/);
    await expect(admin.policies.set({ rules: [{ effect: "deny" }] })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});
