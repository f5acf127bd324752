import { describe, expect, it } from "vitest";
import { ToolRegistry } from "../registry";
import { SessionToolState } from "../session";
import { fakeTool, testContext } from "../../testing/tools";
import { oneLine, toolSearchTool } from "./tool_search";

function setup() {
  const registry = new ToolRegistry([
    fakeTool("read_file"),
    fakeTool("jira_create_ticket", {
      deferLoading: true,
      description: "Creates a Jira ticket in a project.",
      searchHint: "issue bug tracker",
    }),
    fakeTool("pg_explain", {
      deferLoading: true,
      description: "Explains a PostgreSQL query plan.",
      searchHint: "database sql performance",
    }),
    fakeTool("s3_upload", {
      deferLoading: true,
      description: "Uploads a file to an S3 bucket.",
      searchHint: "aws storage object",
    }),
  ]);
  const session = new SessionToolState(registry);
  const tool = session.catalog.get("tool_search")!;
  return { session, tool, ...testContext({ toolSearch: session }) };
}

describe("tool_search", () => {
  it("finds by keywords, activates the hits and says they are callable", async () => {
    const { session, tool, ctx } = setup();
    const r = await tool.execute({ query: "slow sql query" }, ctx);
    expect(r.output).toBe(
      "Loaded 1 tool(s); call them directly from now on:\n- pg_explain: Explains a PostgreSQL query plan.",
    );
    expect(r.meta).toEqual({ activated: ["pg_explain"] });
    expect(session.isCallable("pg_explain")).toBe(true);
    expect(session.isCallable("s3_upload")).toBe(false);
  });

  it.each([
    ["file a bug", "jira_create_ticket"],
    ["upload to aws", "s3_upload"],
    ["jira", "jira_create_ticket"],
  ])("%s → %s", async (query, name) => {
    const { tool, ctx } = setup();
    const r = await tool.execute({ query }, ctx);
    expect((r.meta?.activated as string[])[0]).toBe(name);
  });

  it("respects the limit and defaults to 8", async () => {
    const { tool, ctx, session } = setup();
    await tool.execute({ query: "select:s3_upload,pg_explain,jira_create_ticket", limit: 2 }, ctx);
    expect(session.activated).toEqual(["s3_upload", "pg_explain"]);
    expect(tool.parse({ query: "x", limit: 99 }).ok).toBe(false);
    expect(tool.parse({ query: "" }).ok).toBe(false);
  });

  it("says so when nothing matches", async () => {
    const { tool, ctx, session } = setup();
    const r = await tool.execute({ query: "kubernetes" }, ctx);
    expect(r.output).toContain('No deferred tools match "kubernetes"');
    expect(session.activated).toEqual([]);
  });

  it("answers respond when the session provides no search service", async () => {
    const { tool } = setup();
    await expect(tool.execute({ query: "x" }, testContext().ctx)).rejects.toMatchObject({ kind: "respond" });
  });

  it("is read-only, auto-approved, runs alone and on the server", () => {
    const t = toolSearchTool([]);
    expect([
      t.isReadOnly({ query: "x" }),
      t.isConcurrencySafe({ query: "x" }),
      t.approvalFor({ query: "x" }),
      t.executor,
    ]).toEqual([true, false, "auto", "server"]);
  });

  it.each([
    ["Reads a file. Then more.", "Reads a file."],
    ["No full stop here", "No full stop here"],
    ["Multi\nline   text. x", "Multi line text."],
    ["v1.2 is out! Next", "v1.2 is out!"],
    ["x".repeat(150), `${"x".repeat(99)}…`],
  ])("oneLine(%j)", (d, line) => {
    expect(oneLine(d)).toBe(line);
  });
});
