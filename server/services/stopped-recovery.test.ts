// Several instances on one PostgreSQL database, one of them a real process killed -9 in the
// middle of a restore or a rewind (rewind-crash-child.ts): the live instances announce what it
// left without a restart of their own — its pending restore once its heartbeat stops, once
// whichever peers notice — and leave a live instance's pending restore alone however long its
// runner takes; a rewind's missing event comes with the next sweep.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { openInstance } from "../testing/instance";
import { seedTurns, stopChildAt } from "../testing/checkpoint-crash";
import { createEventHub } from "../hub/events";
import { startStoppedRecovery } from "./stopped-recovery";
import { seedSession as seedHubSession } from "../testing/hub";
import { createRewindService } from "./rewind";
import { createCheckpointService } from "./checkpoints";
import { dropUndo, recordUndo, recoverRestores, restored } from "./checkpoint-undo";

const hasPostgres = testDatabases().includes("postgresql");

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  for (const deadline = Date.now() + ms; ;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!hasPostgres)("what an instance killed -9 left, recovered by its live peers", () => {
  const t = useTestDb("postgresql");
  const dataDir = mkdtempSync(join(tmpdir(), "quiver-stopped-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const peer = async () => {
    const log: string[] = [];
    const inst = await openInstance(t.current.url, {
      anthropicBaseURL: "http://127.0.0.1:9",
      dataDir,
      log: (l) => log.push(l),
    });
    return { ...inst, log, stop: async () => (await inst.parts.dispose(), await inst.handle.close()) };
  };

  const eventsOf = async (sessionId: string) =>
    (await t.current.db.sessionEvent.findMany({ where: { sessionId }, orderBy: { seq: "asc" } })).map(
      (r) => r.payload as Record<string, unknown> & { type: string },
    );

  it(
    "a restore whose instance was killed is announced once by the peers running, with no restart; a live one's is left",
    { timeout: 60_000 },
    async () => {
      const { sessionId, turnIds } = await seedTurns(t.current.db);
      const [b, c] = [await peer(), await peer()];
      const a = await stopChildAt(t.current.url, sessionId, turnIds[0], "restore", "runner", { cluster: true });
      try {
        const [pending] = await t.current.db.checkpoint.findMany({ where: { sessionId, NOT: { phase: "before" } } });
        expect(pending.phase).toMatch(/^restore-pending:/);
        // The restore's runner is slow, its instance alive: peers that sweep, and one that starts, leave it.
        await new Promise((r) => setTimeout(r, 2_500));
        await Promise.all([b.parts.cluster!.sweep(), c.parts.cluster!.sweep()]);
        const d = await peer();
        await d.stop();
        expect(await t.current.db.checkpoint.findUnique({ where: { id: pending.id } })).toMatchObject({
          phase: pending.phase,
        });
        expect(await eventsOf(sessionId)).toEqual([]);
        await a.kill9();
        const row = await until("the restore announced", async () => {
          const r = await t.current.db.checkpoint.findUnique({ where: { id: pending.id } });
          return r?.phase === "restore-undo" ? r : undefined;
        });
        expect(row.commit).toBe("b".repeat(40));
        // Both peers saw the heartbeat stop; one announced it.
        await Promise.all([b.parts.cluster!.sweep(), c.parts.cluster!.sweep()]);
        const events = await eventsOf(sessionId);
        expect(events.map((e) => e.type)).toEqual(["checkpoint.created", "checkpoint.restored", "notice"]);
        expect(events[2]).toMatchObject({ code: "checkpoint.unknown" });
        expect(events[1]).toMatchObject({ undoCheckpointId: pending.id });
        expect([...b.log, ...c.log].filter((l) => l.includes("restore(s) of gone instance"))).toHaveLength(1);
      } finally {
        await a.kill9();
        await b.stop();
        await c.stop();
      }
    },
  );

  it("a rewind killed before its event gets it from the live peers' sweep", { timeout: 60_000 }, async () => {
    const { sessionId, turnIds } = await seedTurns(t.current.db);
    const b = await peer();
    const { db, url } = t.current;
    const hub = createEventHub(db, { url, writeDelayMs: 0 });
    const publish = (sid: string, body: Parameters<typeof hub.publish>[1]) => hub.publish(sid, body);
    const checkpoints = createCheckpointService({
      db,
      runner: { run: async () => ({ ok: false, output: "" }) },
      publish,
    });
    // The sweep b's parts run each minute, on a quicker clock.
    const sweeps = startStoppedRecovery({
      db,
      publish,
      rewinds: createRewindService({ db, checkpoints, publish }),
      cluster: b.parts.cluster,
      log: () => undefined,
      sweepMs: 200,
      ageMs: 1_000,
    });
    try {
      await sweeps.atStart();
      const a = await stopChildAt(url, sessionId, turnIds[0], "rewind", "turn.rewound", { cluster: true });
      await a.kill9();
      const [rewind] = await db.rewind.findMany({ where: { sessionId } });
      const told = await until("the rewind announced", async () => {
        const e = (await eventsOf(sessionId)).filter((ev) => ev.type === "turn.rewound");
        return e.length ? e : undefined;
      });
      expect(told).toEqual([expect.objectContaining({ rewindId: rewind.id, turnIds })]);
      await new Promise((r) => setTimeout(r, 600));
      expect((await eventsOf(sessionId)).filter((ev) => ev.type === "turn.rewound")).toHaveLength(1);
    } finally {
      await sweeps.dispose();
      await hub.dispose();
      await b.stop();
    }
  });

  it("an owner that only stalled, its restore taken over, answers late without a second announcement", async () => {
    const { sessionId, turnIds } = await seedTurns(t.current.db);
    const { db, url } = t.current;
    const hub = createEventHub(db, { url, writeDelayMs: 0 });
    const publish = (sid: string, body: Parameters<typeof hub.publish>[1]) => hub.publish(sid, body);
    try {
      const target = await db.checkpoint.findFirstOrThrow({ where: { sessionId, phase: "before" } });
      const stalled = { db, publish, instanceId: "stalled" };
      const made = { commit: "b".repeat(40), filesChanged: 1 };
      const late = await recordUndo(stalled, { sessionId, turnId: turnIds[0], targetId: target.id }, made);
      const refused = await recordUndo(stalled, { sessionId, turnId: turnIds[0], targetId: target.id }, made);
      const gone = { before: new Date(0), ownerGone: (owner: string) => owner === "stalled" };
      expect(await recoverRestores({ db, publish, instanceId: "peer" }, gone)).toBe(2);
      const change = { path: "a.txt", change: "restore" as const, added: 1, removed: 1 };
      const answer = await restored(stalled, late, { changes: [change], kept: [], undoCommit: "c".repeat(40) });
      expect(answer.undoCheckpointId).toBe(late.id);
      await dropUndo(stalled, refused);
      const types = (await eventsOf(sessionId)).map((e) => e.type);
      expect(types.filter((ty) => ty === "checkpoint.restored")).toHaveLength(2);
      // The rows the chat announced as Undo stay, with the commit it was told of.
      const rows = await db.checkpoint.findMany({ where: { id: { in: [late.id, refused.id] } } });
      expect(rows.map((r) => [r.phase, r.commit])).toEqual([
        ["restore-undo", "b".repeat(40)],
        ["restore-undo", "b".repeat(40)],
      ]);
    } finally {
      await hub.dispose();
    }
  });

  it("workspaces a gone instance's project delete left `deleting` are usable again; a live one's and unnamed marks stay", async () => {
    const db = t.current.db;
    const { userId, orgId } = await seedHubSession(db);
    const project = await db.project.create({ data: { orgId, name: `p-${Date.now()}`, createdById: userId } });
    const marks = { atStart: "gone-at-start", peer: "gone-later", live: "live-peer", none: null };
    const ids: Record<string, string> = {};
    for (const [name, by] of Object.entries(marks)) {
      const other = await db.user.create({ data: { email: `${name}-${Date.now()}@test.invalid`, name } });
      ids[name] = `ws-${name}-${Date.now()}`;
      await db.workspace.create({
        data: { id: ids[name], projectId: project.id, userId: other.id, state: "deleting", deletingBy: by },
      });
    }
    const stateOf = async (name: string) => (await db.workspace.findUniqueOrThrow({ where: { id: ids[name] } })).state;
    const log: string[] = [];
    const live = ["me", "live-peer", "gone-later"];
    const recovery = startStoppedRecovery({
      db,
      publish: async () => undefined,
      rewinds: { recover: async () => 0 },
      cluster: { id: "me", liveInstances: async () => live },
      log: (l) => log.push(l),
    });
    try {
      await recovery.atStart();
      expect([await stateOf("atStart"), await stateOf("peer"), await stateOf("live"), await stateOf("none")]).toEqual([
        "creating",
        "deleting",
        "deleting",
        "deleting",
      ]);
      await recovery.peersGone(["gone-later"]);
      expect([await stateOf("peer"), await stateOf("live"), await stateOf("none")]).toEqual([
        "creating",
        "deleting",
        "deleting",
      ]);
      expect((await db.workspace.findUniqueOrThrow({ where: { id: ids.peer } })).deletingBy).toBeNull();
      expect(log.join("\n")).toMatch(/usable again/);
    } finally {
      await recovery.dispose();
    }
  });
});
