import { describe, expect, it } from "vitest";
import { ToolRegistry } from "./registry";
import { SessionToolState } from "./session";
import { fakeTool } from "../testing/tools";

const registry = () =>
  new ToolRegistry([
    fakeTool("read_file"),
    fakeTool("shell", { capabilities: ["ExecutesCode"] }),
    fakeTool("github_create_issue", {
      deferLoading: true,
      description: "Creates an issue in a GitHub repository.",
      searchHint: "bug ticket report",
    }),
    fakeTool("github_merge_pr", {
      deferLoading: true,
      description: "Merges a GitHub pull request.",
      searchHint: "pull request merge",
    }),
    fakeTool("slack_post", {
      deferLoading: true,
      description: "Posts a message to a Slack channel.",
      searchHint: "chat notify",
    }),
    fakeTool("db_query", { deferLoading: true, description: "Runs a read-only SQL query against the database." }),
  ]);

const names = (json: string) => JSON.parse(json).map((e: { name: string }) => e.name);

describe("deferred activation", () => {
  it("appends activated tools at the tail in activation order, never re-sorted", () => {
    const s = new SessionToolState(registry());
    const prefix = s.json();
    expect(names(prefix)).toEqual(["read_file", "shell", "tool_search"]);
    s.activate(["slack_post"]);
    const one = s.json();
    s.activate(["db_query", "github_create_issue"]);
    const three = s.json();
    expect(names(three)).toEqual([
      "read_file",
      "shell",
      "tool_search",
      "slack_post",
      "db_query",
      "github_create_issue",
    ]);
    // every earlier byte stays: the prompt cache keeps its prefix
    expect(one.startsWith(prefix.slice(0, -1))).toBe(true);
    expect(three.startsWith(one.slice(0, -1))).toBe(true);
  });

  it.each([
    [
      ["slack_post", "db_query"],
      ["slack_post", "db_query"],
    ],
    [
      ["db_query", "slack_post"],
      ["db_query", "slack_post"],
    ],
    [
      ["db_query", "db_query", "read_file", "nope", "slack_post"],
      ["db_query", "slack_post"],
    ],
  ])("activate(%j) keeps order and ignores duplicates, loaded and unknown tools", (input, order) => {
    const s = new SessionToolState(registry());
    s.activate(input);
    expect(s.activated).toEqual(order);
    expect(
      s
        .tools()
        .slice(3)
        .map((t) => t.name),
    ).toEqual(order);
  });

  it("restores a persisted activation list", () => {
    const a = new SessionToolState(registry());
    a.activate(["github_merge_pr", "slack_post"]);
    const b = new SessionToolState(registry(), "coding", a.activated);
    expect(b.json()).toBe(a.json());
  });

  it("is callable only once loaded or activated", () => {
    const s = new SessionToolState(registry());
    expect(s.isCallable("read_file")).toBe(true);
    expect(s.isCallable("slack_post")).toBe(false);
    s.activate(["slack_post"]);
    expect(s.isCallable("slack_post")).toBe(true);
    expect(s.isCallable("nope")).toBe(false);
  });

  it("search activates the hits; sessions do not share activations", () => {
    const r = registry();
    const a = new SessionToolState(r);
    const b = new SessionToolState(r);
    const hits = a.searchAndActivate("merge a pull request", 8);
    expect(hits[0].name).toBe("github_merge_pr");
    expect(a.activated).toContain("github_merge_pr");
    expect(b.activated).toEqual([]);
    expect(b.json()).toBe(r.catalog().json);
  });

  it("select: loads named tools in the given order, repairing names", () => {
    const s = new SessionToolState(registry());
    const hits = s.searchAndActivate("select: slack-post, githubCreateIssue, nope", 8);
    expect(hits.map((h) => h.name)).toEqual(["slack_post", "github_create_issue"]);
    expect(s.activated).toEqual(["slack_post", "github_create_issue"]);
  });

  it("entries match the serialized list", () => {
    const s = new SessionToolState(registry());
    s.activate(["db_query"]);
    expect(JSON.stringify(s.entries())).toBe(s.json());
  });

  it("a tool that leaves the registry drops out of the tail", () => {
    const r = new ToolRegistry([fakeTool("read_file"), fakeTool("x_tool_a", { deferLoading: true })]);
    const s = new SessionToolState(r);
    s.activate(["x_tool_a"]);
    r.register(fakeTool("x_tool_a", { deferLoading: true })); // duplicate: becomes a fail-closed stand-in
    expect(s.tools().map((t) => [t.name, t.failClosed])).toEqual([
      ["read_file", false],
      ["tool_search", false],
      ["x_tool_a", true],
    ]);
  });
});
