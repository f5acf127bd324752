// An MCP server's annotations are claims unless the config vouches for the server: an untrusted
// server saying `openWorldHint: false` must not take its tool out of an org rule on Network, nor
// `destructiveHint: false` take the warning off its card; a trusted one is believed.
import { describe, expect, it } from "vitest";
import { decide, policySubject, type LoadedPolicy } from "../../policy/decide";
import { mcpTool } from "./adapt";

const denyNetwork: LoadedPolicy = { ok: true, version: 1, rules: [{ effect: "deny", capability: "Network" }] };
const none = { sessionKeys: new Set<string>(), rejected: new Map() };
const hints = { openWorldHint: false, destructiveHint: false, readOnlyHint: true };
const tool = (trusted: boolean) =>
  mcpTool(
    { name: "notes", trusted, call: async () => ({ content: [] }) },
    { name: "lookup", inputSchema: { type: "object" }, annotations: hints },
    "mcp__notes__lookup",
    false,
  );

describe("MCP hints from a server the config does not trust", () => {
  it("keeps the tool open-world and destructive, so an org deny of Network holds", () => {
    const t = tool(false);
    expect(t.isOpenWorld({})).toBe(true);
    expect(t.isDestructive({})).toBe(true);
    expect(policySubject({ tool: t, input: {} }).capabilities).toContain("Network");
    expect(decide({ tool: t, input: {} }, denyNetwork, none)).toMatchObject({
      action: "deny",
      decision: "policy_deny",
    });
  });

  it("believes them from a trusted server", () => {
    const t = tool(true);
    expect(t.isOpenWorld({})).toBe(false);
    expect(t.isDestructive({})).toBe(false);
    expect(policySubject({ tool: t, input: {} }).capabilities).not.toContain("Network");
    expect(decide({ tool: t, input: {} }, denyNetwork, none).action).toBe("run");
  });
});
