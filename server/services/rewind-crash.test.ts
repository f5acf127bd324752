// kill -9 of a real server process in the middle of a restore, a rewind or its undo
// (rewind-crash-child.ts), at each state change between its rows and its events, on SQLite and
// PostgreSQL. After the next start's recovery the rows and the session's stream agree: a pending
// restore-undo is announced (as a restore whose answer was lost, unless its events were stored),
// a committed rewind or undo gets its turn.rewound / turn.unrewound, nothing is announced twice,
// and the person's Undo still works.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { crashAt, seedTurns } from "../testing/checkpoint-crash";
import { createEventHub } from "../hub/events";
import { createCheckpointService } from "./checkpoints";
import { recoverRestores } from "./checkpoint-undo";
import { createRewindService } from "./rewind";

describe.each(testDatabases())("a server killed mid-restore or mid-rewind, on %s", (provider) => {
  const t = useTestDb(provider);

  const seed = () => seedTurns(t.current.db);

  /** What the next start does, with its own hub: returns the events of the session. */
  async function restart(sessionId: string) {
    const { db, url } = t.current;
    const hub = createEventHub(db, { url, writeDelayMs: 0 });
    const publish = (sid: string, body: Parameters<typeof hub.publish>[1]) => hub.publish(sid, body);
    const runner = { run: async () => ({ ok: false, output: "no runner" }) };
    const checkpoints = createCheckpointService({ db, runner, publish });
    const rewinds = createRewindService({ db, checkpoints, publish });
    const now = new Date();
    const told = (await recoverRestores({ db, publish }, now)) + (await rewinds.recover(now));
    return { hub, checkpoints, rewinds, told, events: () => eventsOf(sessionId) };
  }

  async function eventsOf(sessionId: string) {
    const rows = await t.current.db.sessionEvent.findMany({ where: { sessionId }, orderBy: { seq: "asc" } });
    return rows.map((r) => r.payload as Record<string, unknown> & { type: string });
  }

  const undoRows = (sessionId: string) =>
    t.current.db.checkpoint.findMany({ where: { sessionId, NOT: { phase: { in: ["before", "after"] } } } });

  it("a restore killed while the runner was asked: announced once as lost, with its Undo", async () => {
    const { sessionId, turnIds } = await seed();
    await crashAt(t.current.url, sessionId, turnIds[0], "restore", "runner");
    const [pending] = await undoRows(sessionId);
    expect(pending.phase).toMatch(/^restore-pending:/);
    const before = await restart(sessionId);
    const events = await before.events();
    const [row] = await undoRows(sessionId);
    expect(row).toMatchObject({ id: pending.id, phase: "restore-undo", commit: "b".repeat(40) });
    expect(events.filter((e) => e.type === "checkpoint.created")).toEqual([
      expect.objectContaining({ checkpointId: row.id, phase: "restore-undo" }),
    ]);
    const target = await t.current.db.checkpoint.findFirst({ where: { sessionId, phase: "before" } });
    expect(events.filter((e) => e.type === "checkpoint.restored")).toEqual([
      expect.objectContaining({ checkpointId: target!.id, undoCheckpointId: row.id }),
    ]);
    expect(events.filter((e) => e.type === "notice").map((e) => e.code)).toEqual(["checkpoint.unknown"]);
    expect((await before.checkpoints.list(sessionId)).checkpoints.map((c) => c.phase)).toEqual([
      "before",
      "restore-undo",
    ]);
    await before.hub.dispose();
    // A second start announces nothing again.
    const again = await restart(sessionId);
    expect(again.told).toBe(0);
    expect(await eventsOf(sessionId)).toHaveLength(events.length);
    await again.hub.dispose();
  });

  it("a restore killed between its two events: the missing one follows, the first is not repeated", async () => {
    const { sessionId, turnIds } = await seed();
    await crashAt(t.current.url, sessionId, turnIds[0], "restore", "checkpoint.restored");
    const hub = createEventHub(t.current.db, { url: t.current.url });
    const listing = createCheckpointService({
      db: t.current.db,
      runner: { run: async () => ({ ok: false, output: "" }) },
      publish: hub.publish,
    });
    expect((await listing.list(sessionId)).checkpoints.map((c) => c.phase)).toEqual(["before"]);
    await hub.dispose();
    const after = await restart(sessionId);
    const events = await after.events();
    expect(events.map((e) => e.type)).toEqual([
      "checkpoint.created",
      "checkpoint.created",
      "checkpoint.restored",
      "notice",
    ]);
    expect((await undoRows(sessionId))[0].phase).toBe("restore-undo");
    await after.hub.dispose();
  });

  it("a restore killed once its events were stored: settled without a second announcement", async () => {
    const { sessionId, turnIds } = await seed();
    await crashAt(t.current.url, sessionId, turnIds[0], "restore", "after:checkpoint.restored");
    const after = await restart(sessionId);
    const events = await after.events();
    expect(events.map((e) => e.type)).toEqual(["checkpoint.created", "checkpoint.restored"]);
    expect(await undoRows(sessionId)).toEqual([
      expect.objectContaining({ phase: "restore-undo", commit: "c".repeat(40) }),
    ]);
    await after.hub.dispose();
  });

  it("a rewind killed before its event: the turns the model forgets are shown rewound, and Undo works", async () => {
    const { sessionId, turnIds } = await seed();
    await crashAt(t.current.url, sessionId, turnIds[0], "rewind", "turn.rewound");
    const [rewind] = await t.current.db.rewind.findMany({ where: { sessionId } });
    const marked = await t.current.db.turn.findMany({ where: { sessionId, rewindId: rewind.id } });
    expect(marked.map((m) => m.id).sort()).toEqual([...turnIds].sort());
    const after = await restart(sessionId);
    expect((await after.events()).filter((e) => e.type === "turn.rewound")).toEqual([
      expect.objectContaining({ rewindId: rewind.id, turnIds }),
    ]);
    await after.rewinds.unrewind(sessionId, rewind.id);
    expect(await t.current.db.turn.count({ where: { sessionId, rewindId: { not: null } } })).toBe(0);
    expect((await after.events()).filter((e) => e.type.startsWith("turn."))).toEqual([
      expect.objectContaining({ type: "turn.rewound" }),
      expect.objectContaining({ type: "turn.unrewound", rewindId: rewind.id }),
    ]);
    await after.hub.dispose();
    const again = await restart(sessionId);
    expect(again.told).toBe(0);
    await again.hub.dispose();
  });

  it("an undo killed before its event: the next start, or the person's Undo again, tells the chat", async () => {
    const { sessionId, turnIds } = await seed();
    await crashAt(t.current.url, sessionId, turnIds[0], "rewind", "done");
    const [rewind] = await t.current.db.rewind.findMany({ where: { sessionId } });
    await crashAt(t.current.url, sessionId, turnIds[0], `unrewind:${rewind.id}`, "turn.unrewound");
    expect(await t.current.db.rewind.findUnique({ where: { id: rewind.id } })).toMatchObject({
      undoneAt: expect.any(Date),
    });
    expect(await t.current.db.turn.count({ where: { sessionId, rewindId: { not: null } } })).toBe(0);
    // The Undo clicked again (the chat still shows the turns rewound) publishes what was lost.
    const hub = createEventHub(t.current.db, { url: t.current.url });
    const publish = (sid: string, body: Parameters<typeof hub.publish>[1]) => hub.publish(sid, body);
    const runner = { run: async () => ({ ok: false, output: "" }) };
    const rewinds = createRewindService({
      db: t.current.db,
      checkpoints: createCheckpointService({ db: t.current.db, runner, publish }),
      publish,
    });
    await rewinds.unrewind(sessionId, rewind.id);
    await hub.dispose();
    const types = (await eventsOf(sessionId)).filter((e) => e.type.startsWith("turn.")).map((e) => e.type);
    expect(types).toEqual(["turn.rewound", "turn.unrewound"]);
    const after = await restart(sessionId);
    expect(after.told).toBe(0);
    await after.hub.dispose();
  });

  it("an undo killed before its event and not clicked again: the next start tells the chat", async () => {
    const { sessionId, turnIds } = await seed();
    await crashAt(t.current.url, sessionId, turnIds[0], "rewind", "done");
    const [rewind] = await t.current.db.rewind.findMany({ where: { sessionId } });
    await crashAt(t.current.url, sessionId, turnIds[0], `unrewind:${rewind.id}`, "turn.unrewound");
    const after = await restart(sessionId);
    expect(after.told).toBe(1);
    expect((await after.events()).filter((e) => e.type.startsWith("turn.")).map((e) => e.type)).toEqual([
      "turn.rewound",
      "turn.unrewound",
    ]);
    await after.hub.dispose();
  });
});
