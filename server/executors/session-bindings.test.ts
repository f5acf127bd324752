// The pool's bindings: the runner index follows every bind, move and unbind.
import { describe, expect, it } from "vitest";
import { SessionBindings } from "./session-bindings";

describe("SessionBindings", () => {
  it("lists and counts each runner's sessions through binds, moves and unbinds", () => {
    const b = new SessionBindings<{ runnerId: string; workspaceId?: string }>();
    b.set("s1", { runnerId: "a" });
    b.set("s2", { runnerId: "a", workspaceId: "w" });
    b.set("s3", { runnerId: "b" });
    expect(b.sessionsOn("a").sort()).toEqual(["s1", "s2"]);
    expect([b.countOn("a"), b.countOn("b"), b.countOn("c")]).toEqual([2, 1, 0]);

    b.set("s1", { runnerId: "b" }); // moved
    expect(b.sessionsOn("a")).toEqual(["s2"]);
    expect(b.sessionsOn("b").sort()).toEqual(["s1", "s3"]);
    expect(b.get("s1")).toEqual({ runnerId: "b" });

    expect(b.delete("s2")).toBe(true);
    expect(b.delete("s2")).toBe(false);
    expect(b.countOn("a")).toBe(0);
    expect(b.sessionsOn("a")).toEqual([]);
    expect(b.has("s2")).toBe(false);
  });

  it("walks a copy, so unbinding while walking visits every binding once", () => {
    const b = new SessionBindings<{ runnerId: string; workspaceId?: string }>();
    for (let i = 0; i < 5; i++) b.set(`s${i}`, { runnerId: "a", workspaceId: "w" });
    const seen: string[] = [];
    for (const [id, place] of b.entries()) {
      seen.push(id);
      if (place.workspaceId === "w") b.delete(id);
    }
    expect(seen).toEqual(["s0", "s1", "s2", "s3", "s4"]);
    expect(b.countOn("a")).toBe(0);
  });
});
