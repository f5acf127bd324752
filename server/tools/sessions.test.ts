import { describe, expect, it } from "vitest";
import { ToolRegistry } from "./registry";
import { ToolSessions } from "./sessions";
import { fakeTool } from "./testing";
import { builtinTools } from "./builtin";

const registry = () => new ToolRegistry([fakeTool("read_file"), fakeTool("shell", { capabilities: ["ExecutesCode"] }), fakeTool("a_deferred", { deferLoading: true }), fakeTool("b_deferred", { deferLoading: true })]);

describe("ToolSessions", () => {
  it("keeps one state per session, with its surface and persisted activations", () => {
    const persisted = new Map<string, string[]>([["s2", ["b_deferred"]]]);
    const sessions = new ToolSessions(registry(), {
      presetFor: (id) => (id === "ro" ? "readonly" : "coding"),
      activatedFor: (id) => persisted.get(id) ?? [],
      onActivate: (id, added) => persisted.set(id, [...(persisted.get(id) ?? []), ...added]),
    });
    const s1 = sessions.forSession("s1");
    expect(sessions.forSession("s1")).toBe(s1);
    expect(sessions.forSession("s2").activated).toEqual(["b_deferred"]);
    expect(sessions.forSession("ro").tools().map((t) => t.name)).toEqual(["read_file", "tool_search"]);
    s1.searchAndActivate("select:a_deferred", 8);
    expect(persisted.get("s1")).toEqual(["a_deferred"]);
    expect(persisted.get("s2")).toEqual(["b_deferred"]); // restoring does not re-persist
    sessions.drop("s1");
    expect(sessions.size).toBe(2);
    expect(sessions.forSession("s1").activated).toEqual(["a_deferred"]);
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
