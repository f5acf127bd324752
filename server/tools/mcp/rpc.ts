// Small helpers over the SDK's client: tools/list followed page by page, and any error the SDK
// or a transport throws as one readable clause for log lines and tool results.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { loadedMcpSdk } from "./sdk";

const MAX_PAGES = 100;

/** Every page of tools/list; a server that repeats a cursor or never ends is cut off. */
export async function listAll(client: Client, timeout: number): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await client.listTools(cursor ? { cursor } : undefined, { timeout });
    tools.push(...r.tools);
    cursor = r.nextCursor;
    if (!cursor || seen.has(cursor)) break;
    seen.add(cursor);
  }
  return tools;
}

export function errorText(e: unknown): string {
  const sdk = loadedMcpSdk();
  if (sdk && e instanceof sdk.McpError && e.code === sdk.ErrorCode.RequestTimeout) return "it did not answer in time";
  if (sdk && e instanceof sdk.McpError && e.code === sdk.ErrorCode.ConnectionClosed) return "it closed the connection";
  const err = e as { message?: string; code?: string; cause?: { message?: string } };
  if (err?.code === "ENOENT") return `command not found (${err.message})`;
  return [err?.message ?? String(e), err?.cause?.message].filter(Boolean).join(": ");
}
