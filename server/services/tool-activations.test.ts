import { describe, expect, it } from "vitest";
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

  it("survive a restart: same callable tools, same catalog bytes, in activation order", async () => {
    const { session } = await seedSession(t.current.db);
    const before = new ToolSessions(registry(), toolActivationStore(t.current.db));
    const state = await before.load(session.id);
    expect(state.isCallable("zip")).toBe(false);
    state.activate(["zip"]);
    state.activate(["deploy"]);
    await waitFor(async () => {
      const row = await t.current.db.session.findUnique({ where: { id: session.id } });
      return (row?.activatedTools as string[]).length === 2;
    }, "activations saved");

    // a new server process: nothing in memory
    const after = new ToolSessions(registry(), toolActivationStore(t.current.db));
    const restored = await after.load(session.id);
    expect(restored.activated).toEqual(["zip", "deploy"]);
    expect(restored.isCallable("deploy")).toBe(true);
    expect(restored.isCallable("lint_css")).toBe(false);
    expect(restored.json()).toBe(state.json());
  });

  it("a session that never activated anything loads with none", async () => {
    const { session } = await seedSession(t.current.db);
    const state = await new ToolSessions(registry(), toolActivationStore(t.current.db)).load(session.id);
    expect(state.activated).toEqual([]);
    expect(state.json()).toBe(registry().catalog("coding").json);
  });
});
