// One MCP tool as a slot tool. Its JSON Schema goes through defineExternalTool (sanitised,
// validated like any tool's input); its annotations become the slot's properties. Annotations
// are the server's own hints, believed only from a server the MCP config marks `"trusted": true`
// (anyone else's hint is a claim, not a fact): its readOnlyHint lifts the approval, and its
// openWorldHint: false and destructiveHint: false take away what org rules on Network match and
// the card's warning. A tool without them, or of an untrusted server, is treated as able to do
// anything (approval required, destructive, open-world). Every
// result, an isError one included, is third-party text: it is marked for the external-content
// wrapper whatever the hints say.
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { defineExternalTool, type ExternalTool } from "../external";
import type { Capability } from "../tool";
import { resultText } from "./content";

export interface McpCaller {
  readonly name: string;
  /** The config marks the server trusted: its readOnlyHint is believed. */
  readonly trusted?: boolean;
  call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>;
}

const MAX_DESCRIPTION = 4000;

function describe(server: string, tool: McpTool): string {
  const title = tool.title ?? tool.annotations?.title;
  const text =
    (tool.description ?? "").trim() || (title ? `${title}.` : `The tool ${tool.name} of the MCP server ${server}.`);
  return text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION - 1)}…` : text;
}

export function mcpTool(server: McpCaller, tool: McpTool, name: string, deferLoading: boolean): ExternalTool {
  const a = tool.annotations ?? {};
  const trusted = server.trusted === true;
  const readOnly = a.readOnlyHint === true && trusted;
  const capabilities: Capability[] = a.openWorldHint === true ? ["Network"] : [];
  return defineExternalTool({
    name,
    description: describe(server.name, tool),
    inputSchema: tool.inputSchema,
    capabilities,
    executor: "server",
    mcpServer: server.name,
    searchHint: [server.name, tool.name, tool.title ?? a.title ?? ""].join(" ").trim(),
    deferLoading,
    approvalFor: () => (readOnly ? "auto" : "required"),
    isReadOnly: () => readOnly,
    isConcurrencySafe: () => readOnly,
    // The MCP defaults: a tool that is not read-only may destroy, and any tool may reach out.
    isDestructive: () => !readOnly && !(trusted && a.destructiveHint === false),
    isOpenWorld: () => !(trusted && a.openWorldHint === false),
    async execute(input, ctx) {
      const result = await server.call(tool.name, input, ctx.signal);
      const output = resultText(result);
      const meta = { mcpServer: server.name, mcpTool: tool.name, origin: `mcp:${server.name}` };
      return { output, kind: "text", network: true, meta, ...(result.isError === true ? { isError: true } : {}) };
    },
  });
}
