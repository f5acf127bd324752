import { describe, expect, it } from "vitest";
import { baseToolName, mcpToolNames, toolKey } from "./naming";
import { resultText } from "./content";
import { TOOL_NAME } from "../registry";

describe("MCP tool names", () => {
  it("are mcp__<server>__<tool> with other characters replaced", () => {
    expect(baseToolName({ server: "github", tool: "create_issue" })).toBe("mcp__github__create_issue");
    expect(baseToolName({ server: "my server", tool: "read.file/v2" })).toBe("mcp__my_server__read_file_v2");
  });

  it("fit the providers' 64 characters, ending in a hash when cut", () => {
    const long = baseToolName({ server: "s", tool: "x".repeat(100) });
    expect(long).toMatch(TOOL_NAME);
    expect(long).toHaveLength(64);
    expect(long).toMatch(/_[0-9a-f]{8}$/);
    expect(baseToolName({ server: "s", tool: "y".repeat(100) })).not.toBe(long);
  });

  it("settle collisions the same way whatever the order", () => {
    const refs = [
      { server: "a.b", tool: "t" },
      { server: "a b", tool: "t" },
      { server: "c", tool: "t" },
    ];
    const one = mcpToolNames(refs);
    const two = mcpToolNames([...refs].reverse());
    expect([...one].sort()).toEqual([...two].sort());
    const names = [...one.values()];
    expect(new Set(names).size).toBe(3);
    expect(one.get(toolKey({ server: "a b", tool: "t" }))).toBe("mcp__a_b__t");
    expect(one.get(toolKey({ server: "a.b", tool: "t" }))).toMatch(/^mcp__a_b__t_[0-9a-f]{8}$/);
    for (const n of names) expect(n).toMatch(TOOL_NAME);
  });
});

describe("MCP result content", () => {
  it("keeps text, notes images, inlines resource text and adds structured content once", () => {
    expect(
      resultText({
        content: [
          { type: "text", text: "hello" },
          { type: "image", data: Buffer.from("abcdef").toString("base64"), mimeType: "image/png" },
          { type: "resource", resource: { uri: "file:///a.txt", text: "inside" } },
          {
            type: "resource",
            resource: {
              uri: "file:///b.bin",
              mimeType: "application/octet-stream",
              blob: Buffer.from("xyz").toString("base64"),
            },
          },
          { type: "resource_link", uri: "file:///c", name: "c file" },
        ],
        structuredContent: { n: 1 },
      }),
    ).toBe(
      'hello\n\n[image: image/png, 6 bytes, not shown]\n\ninside\n\n[resource file:///b.bin (application/octet-stream), 3 bytes, binary, not shown]\n\n[resource link: file:///c (c file)]\n\n{\n  "n": 1\n}',
    );
    // the text block already carries the structured content: not repeated
    expect(resultText({ content: [{ type: "text", text: '{"n": 1}' }], structuredContent: { n: 1 } })).toBe('{"n": 1}');
    expect(resultText({ content: [] })).toBe("(the tool returned no content)");
    expect(resultText({ content: [], isError: true })).toBe("The tool failed and gave no details.");
  });
});
