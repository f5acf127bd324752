// Turn rows written through the driver must read back through Prisma exactly as Prisma's own
// writes would (dates, Json, defaults), and `begin` must keep one running turn per session.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../../testing/db";
import { seedSession } from "../../testing/hub";

const usage = { inputTokens: 12, outputTokens: 34, cacheReadTokens: 5, cacheWriteTokens: 6 };

describe.each(testDatabases())("turn rows on %s", (provider) => {
  const t = useTestDb(provider);

  it("begins a turn: the turn, the user's message after the last one, the session running", async () => {
    const { db, rows } = t.current;
    const { sessionId, orgId } = await seedSession(db);
    await db.message.create({
      data: { sessionId, position: 4, role: "user", content: [{ type: "text", text: "earlier" }] },
    });
    const before = new Date(Date.now() - 1);
    const begun = await rows.begin({ sessionId, orgId, instanceId: "instance-1", text: "héllo ✓" });
    if (!begun.ok) throw new Error(`not begun: ${begun.reason}`);
    expect(begun.position).toBe(5);
    const turn = await db.turn.findUniqueOrThrow({ where: { id: begun.turnId } });
    expect(turn).toMatchObject({
      sessionId,
      status: "running",
      instanceId: "instance-1",
      inputTokens: 0,
      endedAt: null,
    });
    expect(turn.startedAt.getTime()).toBeGreaterThanOrEqual(before.getTime());
    const message = await db.message.findUniqueOrThrow({ where: { id: begun.messageId } });
    expect(message).toMatchObject({
      turnId: begun.turnId,
      position: 5,
      role: "user",
      content: [{ type: "text", text: "héllo ✓" }],
    });
    const session = await db.session.findUniqueOrThrow({ where: { id: sessionId } });
    expect(session.status).toBe("running");
    expect(session.updatedAt.getTime()).toBeGreaterThanOrEqual(before.getTime());
    // Prisma's own date filters see the rows: the stored form compares as its dates do.
    expect(
      await db.turn.count({
        where: { id: begun.turnId, startedAt: { gte: before, lte: new Date(Date.now() + 1000) } },
      }),
    ).toBe(1);
  });

  it("stores a message's images with it, as Prisma reads them, and refuses a reused one the session lacks, storing nothing", async () => {
    const { db, rows } = t.current;
    const { sessionId, orgId } = await seedSession(db);
    const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 255, 7]);
    const image = { id: "img-1", mediaType: "image/png", bytes, sha256: "a".repeat(64) };
    const begun = await rows.begin({ sessionId, orgId, text: "", images: [image] });
    if (!begun.ok) throw new Error(`not begun: ${begun.reason}`);
    expect(begun.images).toEqual([{ id: "img-1", mediaType: "image/png", bytes: 11 }]);
    const stored = await db.attachment.findUniqueOrThrow({ where: { id: "img-1" } });
    expect({ ...stored, bytes: [...stored.bytes] }).toMatchObject({
      sessionId,
      mediaType: "image/png",
      size: 11,
      sha256: "a".repeat(64),
      bytes: [...bytes],
    });
    expect(await db.attachment.count({ where: { id: "img-1", createdAt: { lte: new Date(Date.now() + 1000) } } })).toBe(
      1,
    );
    // No text: the message is the image's reference alone.
    expect((await db.message.findUniqueOrThrow({ where: { id: begun.messageId } })).content).toEqual([
      { type: "image", attachmentId: "img-1", mediaType: "image/png" },
    ]);
    await db.turn.update({ where: { id: begun.turnId }, data: { status: "completed" } });

    const other = await seedSession(db);
    const refused = await rows.begin({
      sessionId: other.sessionId,
      text: "x",
      images: [{ ...image, id: "img-2" }, { reuse: "img-1" }],
    });
    expect(refused).toEqual({ ok: false, reason: "no_attachment", id: "img-1" });
    expect(await db.attachment.count({ where: { sessionId: other.sessionId } })).toBe(0);
    expect(await db.turn.count({ where: { sessionId: other.sessionId } })).toBe(0);
    expect(await rows.images(other.sessionId, ["img-1"])).toEqual([]);
    const again = await rows.begin({ sessionId, text: "again", images: [{ reuse: "img-1" }] });
    expect(again).toMatchObject({ ok: true, images: [{ id: "img-1", mediaType: "image/png", bytes: 11 }] });
    expect(await rows.images(sessionId, ["img-1", "missing"])).toEqual([
      { id: "img-1", mediaType: "image/png", base64: Buffer.from(bytes).toString("base64") },
    ]);
  });

  it("refuses a session that is missing, in another org, or already running a turn", async () => {
    const { db, rows } = t.current;
    const { sessionId, orgId } = await seedSession(db);
    expect(await rows.begin({ sessionId: "nope", text: "x" })).toEqual({ ok: false, reason: "not_found" });
    expect(await rows.begin({ sessionId, orgId: "another-org", text: "x" })).toEqual({
      ok: false,
      reason: "not_found",
    });
    // Sends racing on one session: exactly one turn begins.
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) => rows.begin({ sessionId, orgId, text: `send ${i}` })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok)).toEqual(Array(4).fill({ ok: false, reason: "busy" }));
    expect(await db.turn.count({ where: { sessionId } })).toBe(1);
    expect(await db.message.count({ where: { sessionId } })).toBe(1);
  });

  it("stores messages, requests and the end of the turn as Prisma reads them", async () => {
    const { db, rows } = t.current;
    const { sessionId, orgId } = await seedSession(db);
    const begun = await rows.begin({ sessionId, orgId, text: "go" });
    if (!begun.ok) throw new Error("not begun");
    const { turnId } = begun;
    const content = [
      { type: "text", text: 'quote " backslash \\ nul-free ✓' },
      { type: "tool_call", id: "c1", name: "echo", arguments: '{"a":1}' },
    ];
    const id = await rows.addMessage({
      sessionId,
      turnId,
      position: begun.position + 1,
      role: "assistant",
      content: content.slice(0, 1),
    });
    await rows.setMessageContent(id, content);
    expect((await db.message.findUniqueOrThrow({ where: { id } })).content).toEqual(content);
    expect(await rows.conversation(sessionId)).toEqual([
      { role: "user", content: [{ type: "text", text: "go" }] },
      { role: "assistant", content },
    ]);

    const first = await rows.openRequest({ turnId, provider: "openai", model: "m", attempt: 1 });
    await rows.closeRequest(first, { stopReason: null, error: "overloaded", usage });
    const second = await rows.openRequest({ turnId, provider: "openai", model: "m", attempt: 2 });
    await rows.closeRequest(second, { stopReason: "stop", error: null, usage });
    const requests = await db.modelRequest.findMany({ where: { turnId }, orderBy: { attempt: "asc" } });
    expect(requests).toMatchObject([
      { id: first, attempt: 1, error: "overloaded", stopReason: null, ...usage },
      { id: second, attempt: 2, error: null, stopReason: "stop", ...usage },
    ]);
    for (const r of requests) expect(r.endedAt!.getTime()).toBeGreaterThanOrEqual(r.startedAt.getTime());

    await rows.turnUsage(turnId, { ...usage, outputTokens: 1 });
    expect(await db.turn.findUniqueOrThrow({ where: { id: turnId } })).toMatchObject({
      outputTokens: 1,
      status: "running",
    });
    // Begun by a lone server (no instance): an instance that does not own it cannot end it.
    expect(
      await rows.end({
        turnId,
        sessionId,
        instanceId: "someone-else",
        status: "completed",
        stopReason: "end_turn",
        error: null,
        usage,
        sessionStatus: "idle",
      }),
    ).toBe(false);
    expect(await db.turn.findUniqueOrThrow({ where: { id: turnId }, include: { session: true } })).toMatchObject({
      status: "running",
      endedAt: null,
      session: { status: "running" },
    });
    expect(
      await rows.end({
        turnId,
        sessionId,
        status: "completed",
        stopReason: "end_turn",
        error: null,
        usage,
        sessionStatus: "idle",
      }),
    ).toBe(true);
    const turn = await db.turn.findUniqueOrThrow({ where: { id: turnId }, include: { session: true } });
    expect(turn).toMatchObject({
      status: "completed",
      stopReason: "end_turn",
      error: null,
      ...usage,
      session: { status: "idle" },
    });
    expect(turn.endedAt!.getTime()).toBeGreaterThanOrEqual(turn.startedAt.getTime());
    // Ended: the session takes a new turn.
    expect((await rows.begin({ sessionId, orgId, text: "again" })).ok).toBe(true);
  });

  it("fails a write that breaks a constraint with the database's error, storing nothing", async () => {
    const { db, rows } = t.current;
    const { sessionId, orgId } = await seedSession(db);
    const begun = await rows.begin({ sessionId, orgId, text: "go" });
    if (!begun.ok) throw new Error("not begun");
    // The user's message holds this position already.
    await expect(
      rows.addMessage({ sessionId, turnId: begun.turnId, position: begun.position, role: "assistant", content: [] }),
    ).rejects.toThrow(/unique|UNIQUE/);
    await expect(
      rows.openRequest({ turnId: "no-such-turn", provider: "openai", model: "m", attempt: 1 }),
    ).rejects.toThrow(/foreign key|FOREIGN KEY/i);
    expect(await db.message.count({ where: { sessionId } })).toBe(1);
  });

  // PostgreSQL only: SQLite has no connection to lose.
  if (provider === "postgresql")
    it("carries on after the database ends its connections", async () => {
      const { db, rows } = t.current;
      const { sessionId, orgId } = await seedSession(db);
      const begun = await rows.begin({ sessionId, orgId, text: "before" });
      if (!begun.ok) throw new Error("not begun");
      // An admin (or a restart) ends every other connection: the rows' pool holds dead ones now.
      await db.$executeRawUnsafe(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      await new Promise((r) => setTimeout(r, 100));
      await rows.end({
        turnId: begun.turnId,
        sessionId,
        status: "completed",
        stopReason: null,
        error: null,
        usage,
        sessionStatus: "idle",
      });
      expect((await rows.begin({ sessionId, orgId, text: "after" })).ok).toBe(true);
      expect(await db.turn.count({ where: { sessionId } })).toBe(2);
    });
});
