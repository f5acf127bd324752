// A threaded handle's tool call rows (calls-here.ts) run in the calling thread: what they write
// the query thread's Prisma reads at once and the other way round (a policy stored a moment
// before is the next dispatch's), a write waiting for another connection's write lock leaves
// this thread running, and a closed handle's call rows open again on their next use.
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openDb } from "../index";
import { testDatabases, useTestDb } from "../../testing/db";
import { seedSession } from "../../testing/hub";

const call = (sessionId: string, turnId: string | null) => ({
  sessionId,
  turnId,
  providerCallId: "toolu_1",
  slot: 0,
  name: "read_file",
  input: { path: "a.ts" },
  status: "queued",
  decision: "auto",
});

describe.each(testDatabases())("a threaded handle's tool call rows on %s", (provider) => {
  const t = useTestDb(provider);

  it("read and write what the query thread's client writes and reads, and open again after close", async () => {
    const handle = await openDb(t.current.url, { thread: true });
    try {
      const { db, rows } = handle;
      const { sessionId, orgId, userId } = await seedSession(db);
      const turn = await db.turn.create({ data: { sessionId } });
      expect((await rows.dispatchRows(sessionId, turn.id, null))?.policy).toBeNull();
      await db.orgPolicy.create({ data: { orgId, version: 1, rules: [{ effect: "deny", tool: "shell" }] } });
      expect((await rows.dispatchRows(sessionId, turn.id, null))?.policy).toEqual({
        version: 1,
        rules: [{ effect: "deny", tool: "shell" }],
      });
      const id = await rows.addCall(call(sessionId, turn.id), {
        orgId,
        sessionId,
        actorId: userId,
        action: "tool.auto",
        detail: { tool: "read_file" },
      });
      await rows.updateCall(id, { status: "running", startedAt: new Date() });
      expect(await db.toolCall.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: "running" });
      expect(await db.auditEvent.count({ where: { target: `tool_call:${id}` } })).toBe(1);
      await handle.close();
      expect((await rows.dispatchRows(sessionId, turn.id, null))?.stored).toBe(true);
      await rows.updateCall(id, { status: "succeeded", endedAt: new Date() });
      expect(await db.toolCall.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: "succeeded" });
    } finally {
      await handle.close();
    }
  });

  it.runIf(provider === "sqlite")("wait for another connection's write lock without stopping this thread", async () => {
    const handle = await openDb(t.current.url, { thread: true });
    const other = new Database(t.current.url.replace(/^file:/, ""));
    try {
      const { sessionId } = await seedSession(handle.db);
      other.exec("BEGIN IMMEDIATE");
      let written = false;
      const id = handle.rows.addCall(call(sessionId, null)).then((v) => ((written = true), v));
      // Timers of this thread fire while the write waits: SQLite's own wait would hold them.
      let ticks = 0;
      for (let i = 0; i < 10; i++) await new Promise((r) => setTimeout(r, 10, ticks++));
      expect(ticks).toBe(10);
      expect(written).toBe(false);
      other.exec("COMMIT");
      expect(await handle.db.toolCall.findUnique({ where: { id: await id } })).not.toBeNull();
    } finally {
      if (other.inTransaction) other.exec("ROLLBACK");
      other.close();
      await handle.close();
    }
  });
});
