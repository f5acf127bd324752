// The audit trail against a real server (accounts off: the local owner, from loopback), both
// databases: share links and policy versions leave events naming the person; the audit router
// filters them by kind, area, person and date and pages them; the JSON Lines export streams the
// same selection, checked line by line.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { testServerEnv } from "../testing/env";
import { startQuiver, type Quiver } from "../app";
import type { AppRouter } from "../api/root";
import { createTestDb, testDatabases, type TestDb } from "../testing/db";
import { createAuditService } from "./audit";

const root = join(import.meta.dirname, "..", "..");

describe.each(testDatabases())("the audit trail on %s", (provider) => {
  let quiver: Quiver;
  let db: TestDb & { dispose(): Promise<void> };
  let dataDir: string;
  const api = () => createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });

  beforeAll(async () => {
    db = await createTestDb(provider);
    dataDir = mkdtempSync(join(tmpdir(), "quiver-audit-"));
    quiver = await startQuiver({
      env: testServerEnv(dataDir, { DATABASE_URL: db.url }),
      root,
      web: false,
      log: () => {},
    });
  }, 60_000);
  afterAll(async () => {
    await quiver?.stop();
    await db?.dispose();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it("names the person in every event, filters and pages them, and exports them line by line", async () => {
    const c = api();
    const session = await c.sessions.create.mutate({ title: "audited" });
    const link = await c.shares.create.mutate({ sessionId: session.id });
    await c.shares.revoke.mutate({ linkId: link.id });
    await c.policies.set.mutate({ rules: [{ effect: "deny", command: "rm -rf" }] });
    const owner = await db.db.membership.findFirstOrThrow({
      where: { role: "owner", org: { slug: "local" } },
      include: { user: true },
    });
    // Another writer through the service (as sign-ins and org changes are recorded).
    await createAuditService(db.db).record({
      actorId: owner.userId,
      orgId: owner.orgId,
      action: "auth.signed_in",
      detail: { via: "test" },
    });
    await expect(createAuditService(db.db).record({ actorId: null, action: "no kind" })).rejects.toThrow(/area.verb/);

    const all = await c.audit.list.query({});
    expect(all.events.map((e) => e.action)).toEqual(["auth.signed_in", "policy.set", "share.revoked", "share.created"]);
    for (const e of all.events)
      expect(e.actor).toEqual({ id: owner.userId, name: owner.user.name, email: owner.user.email });
    expect((await c.audit.list.query({ kind: "share" })).events.map((e) => e.action)).toEqual([
      "share.revoked",
      "share.created",
    ]);
    expect((await c.audit.list.query({ kind: "policy.set" })).events[0].detail).toMatchObject({
      version: 1,
      ruleCount: 1,
    });
    expect((await c.audit.list.query({ person: "nobody" })).events).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect((await c.audit.list.query({ from: today, to: today })).events).toHaveLength(4);
    expect((await c.audit.list.query({ to: "2000-01-01" })).events).toHaveLength(0);
    const first = await c.audit.list.query({ limit: 3 });
    const second = await c.audit.list.query({ limit: 3, after: first.next! });
    expect([...first.events, ...second.events].map((e) => e.id)).toEqual(all.events.map((e) => e.id));
    expect(second.next).toBeNull();
    expect((await c.audit.facets.query()).kinds).toEqual([
      "auth.signed_in",
      "policy.set",
      "share.created",
      "share.revoked",
    ]);

    const res = await fetch(`${quiver.url}/api/audit/export?kind=share`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/application\/x-ndjson/);
    expect(res.headers.get("content-disposition")).toMatch(
      /attachment; filename="quiver-audit-\d{4}-\d{2}-\d{2}\.jsonl"/,
    );
    const text = await res.text();
    expect(text.endsWith("\n")).toBe(true);
    const lines = text
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.action, l.actor.id, l.target, l.sessionId])).toEqual([
      ["share.revoked", owner.userId, `share:${link.id}`, session.id],
      ["share.created", owner.userId, `share:${link.id}`, session.id],
    ]);
    expect((await fetch(`${quiver.url}/api/audit/export?from=yesterday`)).status).toBe(400);
  }, 60_000);
});
