import { describe, expect, it } from "vitest";
import { ago, matchSessions } from "./session-search";

describe("session search", () => {
  const list = [{ title: "Fix the login form" }, { title: "Add dark mode" }, { title: "Login rate limits" }];
  it("keeps sessions whose title has every word, in any case and order, keeping the list's order", () => {
    expect(matchSessions(list, "login").map((s) => s.title)).toEqual(["Fix the login form", "Login rate limits"]);
    expect(matchSessions(list, "FORM fix").map((s) => s.title)).toEqual(["Fix the login form"]);
    expect(matchSessions(list, "  ")).toHaveLength(3);
    expect(matchSessions(list, "nothing")).toEqual([]);
  });
  it("says when in words", () => {
    const now = Date.parse("2026-01-02T00:00:00Z");
    expect(ago("2026-01-01T23:59:30Z", now)).toBe("just now");
    expect(ago("2026-01-01T23:50:00Z", now)).toBe("10 min ago");
    expect(ago("2026-01-01T21:00:00Z", now)).toBe("3 h ago");
    expect(ago("2025-12-30T00:00:00Z", now)).toBe("3 d ago");
  });
});
