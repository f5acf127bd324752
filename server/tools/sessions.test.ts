import { describe, expect, it } from "vitest";
import { ToolRegistry } from "./registry";
import { ToolSessions } from "./sessions";
import { fakeTool } from "../testing/tools";
import { builtinTools } from "./builtin";

const registry = () =>
  new ToolRegistry([
    fakeTool("read_file"),
    fakeTool("shell", { capabilities: ["ExecutesCode"] }),
    fakeTool("a_deferred", { deferLoading: true }),
    fakeTool("b_deferred", { deferLoading: true }),
  ]);

function persistedSessions(persisted: Map<string, readonly string[]>, saves: string[][] = []) {
  return new ToolSessions(registry(), {
    presetFor: (id) => (id === "ro" ? "readonly" : "coding"),
    loadActivated: async (id) => persisted.get(id) ?? [],
    saveActivated: async (id, list) => {
      await new Promise((r) => setTimeout(r, list.length === 1 ? 5 : 0)); // an older save finishing later must not win
      saves.push([...list]);
      persisted.set(id, list);
    },
  });
}

describe("ToolSessions", () => {
  it("keeps one state per session, with its surface and persisted activations", async () => {
    const persisted = new Map<string, readonly string[]>([["s2", ["b_deferred"]]]);
    const sessions = persistedSessions(persisted);
    const [s1, again] = await Promise.all([sessions.load("s1"), sessions.load("s1")]);
    expect(again).toBe(s1);
    expect(sessions.forSession("s1")).toBe(s1);
    expect((await sessions.load("s2")).activated).toEqual(["b_deferred"]);
    expect((await sessions.load("ro")).tools().map((t) => t.name)).toEqual(["read_file", "tool_search"]);
    s1.searchAndActivate("select:a_deferred", 8);
    await new Promise((r) => setTimeout(r, 20));
    expect(persisted.get("s1")).toEqual(["a_deferred"]);
    expect(persisted.get("s2")).toEqual(["b_deferred"]); // restoring does not re-persist
    sessions.drop("s1");
    expect(sessions.size).toBe(2);
    expect((await sessions.load("s1")).activated).toEqual(["a_deferred"]);
  });

  it("saves activations in order, the whole list each time", async () => {
    const persisted = new Map<string, readonly string[]>();
    const saves: string[][] = [];
    const state = await persistedSessions(persisted, saves).load("s");
    state.activate(["a_deferred"]);
    state.activate(["b_deferred"]);
    await new Promise((r) => setTimeout(r, 30));
    expect(saves).toEqual([["a_deferred"], ["a_deferred", "b_deferred"]]);
    expect(persisted.get("s")).toEqual(["a_deferred", "b_deferred"]);
  });

  it("before a load, forSession is a view that neither restores nor saves activations", async () => {
    const persisted = new Map<string, readonly string[]>([["s", ["b_deferred"]]]);
    const sessions = persistedSessions(persisted);
    const view = sessions.forSession("s");
    expect(view.activated).toEqual([]);
    view.activate(["a_deferred"]);
    await new Promise((r) => setTimeout(r, 20));
    expect(persisted.get("s")).toEqual(["b_deferred"]);
    expect((await sessions.load("s")).activated).toEqual(["b_deferred"]);
  });
});

describe("built-in tools", () => {
  it("all register cleanly: valid names, object schemas, no stand-ins", () => {
    const r = new ToolRegistry(builtinTools());
    expect(r.problems()).toEqual([]);
    const names = r.catalog().loaded.map((t) => t.name);
    expect(names).toEqual([...names].sort());
    expect(names.length).toBe(builtinTools().length);
  });
});
