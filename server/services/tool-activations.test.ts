import { describe, expect, it } from "vitest";
import { openDb } from "../db";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession, waitFor } from "../testing/pipeline";
import { ToolRegistry } from "../tools/registry";
import { ToolSessions } from "../tools/sessions";
import { fakeTool } from "../testing/tools";
import { toolActivationStore } from "./tool-activations";

const registry = () =>
  new ToolRegistry([
    fakeTool("read_file"),
    fakeTool("deploy", { deferLoading: true }),
    fakeTool("lint_css", { deferLoading: true }),
    fakeTool("zip", { deferLoading: true }),
  ]);

describe.each(testDatabases())("deferred-tool activations on %s", (provider) => {
  const t = useTestDb(provider);
  // Both reads: Prisma's, and plain SQL as the server runs them (its provider named).
  const stores = [
    ["through Prisma", () => toolActivationStore(t.current.db)],
    ["as plain SQL", () => toolActivationStore(t.current.db, provider)],
  ] as const;

  it.each(stores)(
    "survive a restart: same callable tools, same catalog bytes, in activation order (%s)",
    async (_, store) => {
      const { session } = await seedSession(t.current.db);
      const before = new ToolSessions(registry(), store());
      const state = await before.load(session.id);
      expect(state.isCallable("zip")).toBe(false);
      state.activate(["zip"]);
      state.activate(["deploy"]);
      await waitFor(async () => {
        const row = await t.current.db.session.findUnique({ where: { id: session.id } });
        return (row?.activatedTools as string[]).length === 2;
      }, "activations saved");

      // a new server process: nothing in memory
      const after = new ToolSessions(registry(), store());
      const restored = await after.load(session.id);
      expect(restored.activated).toEqual(["zip", "deploy"]);
      expect(restored.isCallable("deploy")).toBe(true);
      expect(restored.isCallable("lint_css")).toBe(false);
      expect(restored.json()).toBe(state.json());
    },
  );

  it.each(stores)("a session that never activated anything loads with none (%s)", async (_, store) => {
    const { session } = await seedSession(t.current.db);
    const state = await new ToolSessions(registry(), store()).load(session.id);
    expect(state.activated).toEqual([]);
    expect(state.json()).toBe(registry().catalog("coding").json);
  });

  it.each(stores)("a stored list that is no list of names activates nothing but its names (%s)", async (_, store) => {
    const { session } = await seedSession(t.current.db);
    const db = t.current.db;
    for (const [stored, expected] of [
      [
        ["zip", 7, null, "deploy"],
        ["zip", "deploy"],
      ],
      [{ zip: true }, []],
      ["zip", []],
    ] as const) {
      await db.session.update({ where: { id: session.id }, data: { activatedTools: stored as never } });
      expect(await store().loadActivated(session.id)).toEqual(expected);
    }
    expect(await store().loadActivated("no-such-session")).toEqual([]);
  });

  it.each(stores)("reads the model of the session's first request, not its latest (%s)", async (_, store) => {
    const { session } = await seedSession(t.current.db);
    const db = t.current.db;
    expect(await store().firstModel(session.id)).toBeUndefined();
    const turn = await db.turn.create({ data: { sessionId: session.id, status: "done" } });
    const at = (ms: number) => new Date(Date.UTC(2026, 11, 2, 10, 0, 0, ms));
    for (const [model, ms] of [
      ["gpt-5", 500],
      ["claude-sonnet-4-5", 20],
      ["qwen3-coder", 900],
    ] as const)
      await db.modelRequest.create({ data: { turnId: turn.id, provider: "anthropic", model, startedAt: at(ms) } });
    expect(await store().firstModel(session.id)).toBe("claude-sonnet-4-5");
    const other = await seedSession(db);
    expect(await store().firstModel(other.session.id)).toBeUndefined();
  });

  it("reads both through the query thread's driver as the server does", async () => {
    const { session } = await seedSession(t.current.db);
    const db = t.current.db;
    await db.session.update({ where: { id: session.id }, data: { activatedTools: ["deploy", "zip"] } });
    const turn = await db.turn.create({ data: { sessionId: session.id, status: "done" } });
    await db.modelRequest.create({ data: { turnId: turn.id, provider: "openai", model: "gpt-5" } });
    const threaded = await openDb(t.current.url, { thread: true });
    try {
      const store = toolActivationStore(threaded.db, provider);
      expect(await store.loadActivated(session.id)).toEqual(["deploy", "zip"]);
      expect(await store.firstModel(session.id)).toBe("gpt-5");
    } finally {
      await threaded.close();
    }
  });
});
