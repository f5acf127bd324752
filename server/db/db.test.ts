// The schema and migrations behave the same on SQLite and PostgreSQL.
import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { testDatabases, useTestDb } from "../testing/db";
import { migrateSqlite, migrationsFor } from "./migrate";
import { ensureLocalActor } from "../services/local-user";

describe.each(testDatabases())("database on %s", (provider) => {
  const t = useTestDb(provider);

  it("applies every committed migration", () => {
    expect(t.current.applied).toEqual(migrationsFor(provider).map((m) => m.name));
  });

  it("creates the local actor once, however often it is asked", async () => {
    const a = await ensureLocalActor(t.current.db);
    const b = await ensureLocalActor(t.current.db);
    expect(b).toEqual(a);
    expect(a.role).toBe("owner");
    expect(await t.current.db.user.count()).toBe(1);
  });

  it("stores bytes exactly, NUL and invalid UTF-8 included", async () => {
    const actor = await ensureLocalActor(t.current.db);
    const session = await t.current.db.session.create({
      data: { title: "t", ownerId: actor.userId, orgId: actor.orgId, workspace: "" },
    });
    const bytes = Buffer.from([0x00, 0xff, 0xfe, 0x41, 0x00, 0xc3, 0x28, 0xe2, 0x82]);
    await t.current.db.spill.create({
      data: {
        id: "s1",
        sessionId: session.id,
        bytes,
        size: bytes.length,
        sha256: createHash("sha256").update(bytes).digest("hex"),
        expiresAt: new Date(Date.now() + 1000),
      },
    });
    const row = await t.current.db.spill.findUniqueOrThrow({ where: { id: "s1" } });
    expect(Buffer.from(row.bytes).equals(bytes)).toBe(true);
  });

  it("keeps per-session event sequence numbers unique", async () => {
    const actor = await ensureLocalActor(t.current.db);
    const session = await t.current.db.session.create({
      data: { title: "t", ownerId: actor.userId, orgId: actor.orgId, workspace: "" },
    });
    await t.current.db.sessionEvent.create({
      data: { sessionId: session.id, seq: 1, type: "notice", payload: { a: 1 } },
    });
    await expect(
      t.current.db.sessionEvent.create({ data: { sessionId: session.id, seq: 1, type: "notice", payload: {} } }),
    ).rejects.toThrow();
  });
});

describe("sqlite migrator", () => {
  it("is idempotent on an existing file", async () => {
    const { mkdtempSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const file = join(mkdtempSync(join(tmpdir(), "quiver-mig-")), "x.db");
    expect(migrateSqlite(file).length).toBeGreaterThan(0);
    expect(migrateSqlite(file)).toEqual([]);
  });
});
