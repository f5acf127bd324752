// A tool call's rows written through the driver must read back through Prisma as Prisma's own
// writes would, its audit entry must stand or fall with its row, and the dispatch read must say
// what Prisma's reads said. On SQLite, a write must wait for a Prisma transaction of the same
// thread without blocking it.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../../testing/db";
import { seedSession } from "../../testing/hub";
import { parseForbidden } from "../../policy/modes";
import { policyOf } from "../../services/policies";
import { NoCallRow } from "./calls";

const call = (sessionId: string, turnId: string | null, fields: object = {}) => ({
  sessionId,
  turnId,
  providerCallId: "toolu_1",
  slot: 2,
  name: "read_file",
  input: { path: "src/é.ts", deep: [1, { x: null }] },
  status: "queued",
  decision: "auto",
  decisionReason: "read-only",
  mode: "ask",
  ...fields,
});

describe.each(testDatabases())("tool call rows on %s", (provider) => {
  const t = useTestDb(provider);

  it("stores the call and its audit entry as Prisma reads them", async () => {
    const { db, rows } = t.current;
    const { sessionId, orgId, userId } = await seedSession(db);
    const turn = await db.turn.create({ data: { sessionId } });
    const before = new Date(Date.now() - 1);
    const id = await rows.addCall(call(sessionId, turn.id), {
      orgId,
      sessionId,
      actorId: userId,
      action: "tool.auto",
      detail: { tool: "read_file", reason: "read-only", policyVersion: 0 },
    });
    const row = await db.toolCall.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({
      sessionId,
      turnId: turn.id,
      providerCallId: "toolu_1",
      slot: 2,
      input: { path: "src/é.ts", deep: [1, { x: null }] },
      status: "queued",
      decision: "auto",
      isError: false,
      truncated: false,
      parentCallId: null,
      startedAt: null,
      endedAt: null,
    });
    expect(row.createdAt.getTime()).toBeGreaterThanOrEqual(before.getTime());
    const audit = await db.auditEvent.findFirstOrThrow({ where: { target: `tool_call:${id}` } });
    expect(audit).toMatchObject({ orgId, sessionId, actorId: userId, action: "tool.auto" });
    expect(audit.detail).toEqual({ tool: "read_file", reason: "read-only", policyVersion: 0 });
    // Prisma's date filters and ordering see the driver's rows as its own.
    const prismaRow = await db.toolCall.create({
      data: { sessionId, turnId: turn.id, providerCallId: "toolu_2", name: "x", input: {} },
    });
    const ordered = await db.toolCall.findMany({ where: { turnId: turn.id }, orderBy: { createdAt: "asc" } });
    expect(ordered.map((r) => r.id)).toEqual([id, prismaRow.id]);
    expect(await db.toolCall.count({ where: { id, createdAt: { gte: before } } })).toBe(1);
  });

  it("updates what a patch names and nothing else; a row that is gone is an error", async () => {
    const { db, rows } = t.current;
    const { sessionId } = await seedSession(db);
    const id = await rows.addCall(call(sessionId, null));
    const started = new Date("2026-01-02T03:04:05.678Z");
    await rows.updateCall(id, { status: "running", startedAt: started });
    await rows.updateCall(id, { status: "succeeded", result: "ok\n", isError: true, truncated: true, spillId: null });
    const row = await db.toolCall.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({
      status: "succeeded",
      result: "ok\n",
      isError: true,
      truncated: true,
      decision: "auto",
    });
    expect(row.startedAt?.toISOString()).toBe(started.toISOString());
    await expect(rows.updateCall("no-such-row", { status: "failed" })).rejects.toThrow(NoCallRow);
  });

  it("writes no audit entry for a call whose row cannot be stored", async () => {
    const { db, rows } = t.current;
    const { sessionId, orgId } = await seedSession(db);
    await db.session.delete({ where: { id: sessionId } });
    await expect(
      rows.addCall(call(sessionId, null), { orgId, sessionId, actorId: null, action: "tool.auto", detail: {} }),
    ).rejects.toThrow();
    expect(await db.auditEvent.count({ where: { sessionId } })).toBe(0);
  });

  it("reads what a dispatch judges by: org, mode, the policy in force, standing approvals, stored calls", async () => {
    const { db, rows } = t.current;
    expect(await rows.dispatchRows("no-such-session", null, null)).toBeUndefined();
    const { sessionId, orgId } = await seedSession(db);
    await db.session.update({ where: { id: sessionId }, data: { mode: "plan" } });
    await db.org.update({ where: { id: orgId }, data: { forbiddenModes: ["auto"] } });
    const turn = await db.turn.create({ data: { sessionId } });
    const first = await rows.dispatchRows(sessionId, turn.id, null);
    expect(first).toEqual({
      orgId,
      mode: "plan",
      // Parsed on PostgreSQL, the column's JSON text on SQLite: what judges it is parseForbidden.
      forbiddenModes: provider === "sqlite" ? `["auto"]` : ["auto"],
      policy: null,
      approvals: [],
      stored: false,
    });
    expect(parseForbidden(first?.forbiddenModes)).toEqual(["auto"]);
    // A column that holds no list (corrupt, or text that does not parse on SQLite) forbids all but ask.
    await db.$executeRawUnsafe(
      `UPDATE "Org" SET "forbiddenModes" = ${provider === "sqlite" ? "'[\"auto\"'" : `'{"auto":true}'::jsonb`} WHERE "id" = ${provider === "sqlite" ? "?" : "$1"}`,
      orgId,
    );
    const corrupt = await rows.dispatchRows(sessionId, turn.id, null);
    expect(parseForbidden(corrupt?.forbiddenModes)).toEqual(["plan", "accept-edits", "auto"]);
    await db.org.update({ where: { id: orgId }, data: { forbiddenModes: ["auto"] } });
    await db.orgPolicy.create({ data: { orgId, version: 1, rules: [{ effect: "deny", tool: "shell" }] } });
    await db.orgPolicy.create({ data: { orgId, version: 2, rules: [{ effect: "ask", tool: "web_fetch" }] } });
    const approval = async (status: string, scope: string | null, fp: string) => {
      const c = await rows.addCall(call(sessionId, turn.id, { providerCallId: fp }));
      await db.approval.create({
        data: { sessionId, toolCallId: c, status, scope, fingerprint: fp, exactFingerprint: `x-${fp}`, request: {} },
      });
    };
    await approval("approved", "session", "a");
    await approval("approved", "once", "b");
    await approval("rejected", null, "c");
    await approval("pending", null, "d");
    const read = await rows.dispatchRows(sessionId, turn.id, null);
    expect(read?.policy).toEqual({ version: 2, rules: [{ effect: "ask", tool: "web_fetch" }] });
    expect(read?.approvals.map((a) => a.fingerprint).sort()).toEqual(["a", "c"]);
    expect(read?.approvals.find((a) => a.fingerprint === "c")).toEqual({
      status: "rejected",
      fingerprint: "c",
      exactFingerprint: "x-c",
      message: null,
    });
    expect(read?.stored).toBe(true);
    // A policy whose stored text is no JSON is read as invalid, and its version named: the
    // pipeline then denies what is not read-only (services/policies.ts).
    if (provider === "sqlite") {
      await db.$executeRawUnsafe(
        `UPDATE "OrgPolicy" SET "rules" = '[{"effect":' WHERE "orgId" = ? AND "version" = 2`,
        orgId,
      );
      const loaded = policyOf((await rows.dispatchRows(sessionId, turn.id, null))?.policy ?? null);
      expect(loaded).toMatchObject({ ok: false, error: expect.stringMatching(/^version 2 is invalid/) });
    }
    // Stored calls are the response's own: another turn, a subagent's, or no turn at all are not.
    const other = await db.turn.create({ data: { sessionId } });
    expect((await rows.dispatchRows(sessionId, other.id, null))?.stored).toBe(false);
    expect((await rows.dispatchRows(sessionId, turn.id, "task-call"))?.stored).toBe(false);
    expect((await rows.dispatchRows(sessionId, null, null))?.stored).toBe(false);
    await rows.addCall(call(sessionId, null, { parentCallId: "task-call" }));
    expect((await rows.dispatchRows(sessionId, null, "task-call"))?.stored).toBe(true);
  });

  it.runIf(provider === "sqlite")(
    "waits for a Prisma transaction of its own thread holding the write lock, without blocking it",
    async () => {
      const { db, rows } = t.current;
      const { sessionId } = await seedSession(db);
      let written: Promise<string> | undefined;
      const startedAt = Date.now();
      await db.$transaction(async (tx) => {
        await tx.session.update({ where: { id: sessionId }, data: { title: "held" } });
        // The lock is held across this await: SQLite's own blocking wait would hold this thread,
        // and with it the transaction's commit, for its whole 5 s timeout and then fail.
        written = rows.addCall(call(sessionId, null));
        await new Promise((r) => setTimeout(r, 100));
      });
      const id = await written!;
      expect(Date.now() - startedAt).toBeLessThan(3000);
      expect(await db.toolCall.findUnique({ where: { id } })).not.toBeNull();
    },
  );
});
