import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolRegistry, UNAVAILABLE, safeName } from "./registry";
import { defineTool, type Tool } from "./tool";
import { defineExternalTool } from "./external";
import { fakeTool, permutations, testContext } from "../testing/tools";

const external = (name: string, schema: unknown = { type: "object", properties: { q: { type: "string" } } }) =>
  defineExternalTool({
    name,
    description: `External ${name}.`,
    inputSchema: schema,
    capabilities: ["Network"],
    execute: async () => ({ output: "ext" }),
  });

describe("registry fail-closed stand-ins", () => {
  const bad: [string, () => Tool, string][] = [
    ["a name with spaces", () => fakeTool("read file"), "read_file"],
    ["a name with a dot", () => fakeTool("mcp.server.tool"), "mcp_server_tool"],
    ["an empty name", () => fakeTool(""), "unnamed_tool"],
    ["a 65-character name", () => fakeTool("x".repeat(65)), "x".repeat(64)],
    [
      "a non-object external schema",
      () => external("ext_array", { type: "array", items: { type: "string" } }),
      "ext_array",
    ],
    ["an external schema with no type", () => external("ext_string", "not a schema"), "ext_string"],
    [
      "an unrepresentable zod schema",
      () =>
        defineTool({
          name: "dated",
          description: "d",
          input: z.object({ at: z.date() }),
          capabilities: [],
          executor: "server",
          execute: async () => ({ output: "" }),
        }),
      "dated",
    ],
  ];

  it.each(bad)("replaces %s with a fail-closed tool and keeps the others", async (_label, make, standInName) => {
    const good = fakeTool("read_file_ok");
    const registry = new ToolRegistry([good, make()]);
    const standIn = registry.get(standInName)!;
    expect(standIn.failClosed).toBe(true);
    expect(standIn.description).toBe(UNAVAILABLE);
    expect(standIn.jsonSchema).toEqual({ type: "object", properties: {} });
    const { ctx } = testContext();
    expect(await standIn.execute({ anything: 1 }, ctx)).toEqual({ output: UNAVAILABLE, isError: true });
    expect(registry.get("read_file_ok")).toBe(good);
    expect(registry.problems()).toHaveLength(1);
    expect(registry.catalog().json).toContain(UNAVAILABLE);
  });

  it("a built-in with the same name as an external tool wins", () => {
    const builtin = fakeTool("search");
    for (const order of permutations([builtin, external("search")])) {
      expect(new ToolRegistry(order).get("search")).toBe(builtin);
    }
  });

  it("two tools of the same source under one name give way to a stand-in, in any order", () => {
    for (const order of permutations([fakeTool("dup"), fakeTool("dup"), fakeTool("other")])) {
      const r = new ToolRegistry(order);
      expect(r.get("dup")!.failClosed).toBe(true);
      expect(r.get("other")!.failClosed).toBe(false);
      expect(r.problems()).toEqual([{ name: "dup", source: "builtin", reason: "duplicate" }]);
    }
  });

  it("registering the same tool object twice is not a conflict", () => {
    const t = fakeTool("once");
    expect(new ToolRegistry([t, t]).get("once")).toBe(t);
  });

  it.each([
    ["read file", "read_file"],
    ["ok-name_1", "ok-name_1"],
    ["é", "_"],
    [42, "unnamed_tool"],
  ])("safeName(%j) = %s", (n, s) => {
    expect(safeName(n)).toBe(s);
  });
});

describe("catalog", () => {
  const tools = () => [
    fakeTool("write_file", { capabilities: ["WritesFiles"] }),
    fakeTool("read_file"),
    fakeTool("shell", { capabilities: ["ExecutesCode"] }),
    external("zeta"),
    external("alpha"),
    fakeTool("glob"),
  ];

  it("orders built-ins by name, then external tools by name", () => {
    const c = new ToolRegistry(tools()).catalog();
    expect(c.loaded.map((t) => t.name)).toEqual(["glob", "read_file", "shell", "write_file", "alpha", "zeta"]);
    expect(JSON.parse(c.json).map((e: { name: string }) => e.name)).toEqual([
      "glob",
      "read_file",
      "shell",
      "write_file",
      "alpha",
      "zeta",
    ]);
  });

  it("is byte-identical across every registration order", () => {
    const reference = new ToolRegistry(tools()).catalog().json;
    let orders = 0;
    for (const order of permutations(tools())) {
      expect(new ToolRegistry(order).catalog().json).toBe(reference);
      orders++;
    }
    expect(orders).toBe(720);
  });

  it("is serialized once and cached until the tool set changes", () => {
    const r = new ToolRegistry(tools());
    const first = r.catalog();
    expect(r.catalog()).toBe(first);
    expect(r.catalog().json).toBe(first.json);
    r.register(fakeTool("list_files"));
    expect(r.catalog()).not.toBe(first);
    expect(r.catalog().loaded.map((t) => t.name)).toContain("list_files");
  });

  it("entries carry name, description and input_schema", () => {
    const c = new ToolRegistry([fakeTool("read_file")]).catalog();
    expect(c.entries).toEqual([
      {
        name: "read_file",
        description: "read_file does read file things.",
        input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
      },
    ]);
  });

  it("presets: read-only surface leaves out tools that write, execute or interact", () => {
    const r = new ToolRegistry([
      ...tools(),
      fakeTool("ask_user", { capabilities: ["Interactive"] }),
      fakeTool("fetch_url", { capabilities: ["Network"] }),
    ]);
    expect(r.catalog("readonly").loaded.map((t) => t.name)).toEqual([
      "fetch_url",
      "glob",
      "read_file",
      "alpha",
      "zeta",
    ]);
    expect(r.catalog("coding").loaded.map((t) => t.name)).toEqual([
      "ask_user",
      "fetch_url",
      "glob",
      "read_file",
      "shell",
      "write_file",
      "alpha",
      "zeta",
    ]);
  });

  it("deferred tools are listed by name and one line in tool_search, not sent in full", () => {
    const r = new ToolRegistry([
      fakeTool("read_file"),
      fakeTool("zz_deploy", { deferLoading: true, description: "Deploys the app to production. Long details follow." }),
      external("alpha"),
    ]);
    const c = r.catalog();
    expect(c.loaded.map((t) => t.name)).toEqual(["read_file", "tool_search", "alpha"]);
    expect(c.deferred.map((t) => t.name)).toEqual(["zz_deploy"]);
    const search = c.entries.find((e) => e.name === "tool_search")!;
    expect(search.description).toContain("- zz_deploy: Deploys the app to production.");
    expect(search.description).not.toContain("Long details");
    expect(c.json).not.toContain('"name":"zz_deploy"');
  });

  it("without deferred tools there is no tool_search", () => {
    expect(new ToolRegistry([fakeTool("read_file")]).catalog().loaded.map((t) => t.name)).toEqual(["read_file"]);
  });
});
