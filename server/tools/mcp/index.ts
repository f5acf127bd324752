// The MCP client: reads QUIVER_MCP_CONFIG's file, starts every server in parallel (each with a
// deadline), and keeps their tools in the registry as external tools named
// `mcp__<server>__<tool>`, rebuilt whenever a server's list changes. A bad file or a server that
// will not start is one log line and its tools are absent; the server starts regardless.
// Owned by server/parts.ts: dispose closes every connection and child process.
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import type { ToolRegistry } from "../registry";
import type { Tool } from "../tool";
import { loadMcpConfig } from "./config";
import { withoutAgentFolders } from "./agent-folders";
import { McpConnection } from "./connection";
import { mcpToolNames, toolKey } from "./naming";
import { mcpTool } from "./adapt";
import { schemaProblem } from "./schema-limits";

export interface McpOptions {
  /** The config file; unset = no MCP servers. */
  configPath?: string;
  registry: ToolRegistry;
  log(line: string): void;
  /** Deadline for starting one server and for listing its tools (default 15 s). */
  connectTimeoutMs?: number;
  /** Per-call deadline when a server's config names none (default 2 minutes). */
  callTimeoutMs?: number;
  /** MCP tools are deferred (found through tool_search) when there are more than this many (default 5). */
  deferOver?: number;
  backoff?: { baseMs: number; maxMs: number };
  /** Folders the agent writes (the local runner's workspaces): no server is configured from,
   *  started in or run from one (agent-folders.ts). */
  agentFolders?: readonly string[];
}

export interface McpClients {
  /** Servers that started, by configured name. */
  readonly connections: ReadonlyMap<string, McpConnection>;
  /** The MCP tools now in the registry. */
  tools(): readonly Tool[];
  dispose(): Promise<void>;
}

export async function startMcp(options: McpOptions): Promise<McpClients> {
  const { registry, log } = options;
  const connections = new Map<string, McpConnection>();
  const lists = new Map<string, McpTool[]>();
  let registered: Tool[] = [];
  let signature = "";
  let started = false;
  let disposed = false;

  // The whole MCP tool set is rebuilt at once: names and deferral depend on every server's list.
  const sync = () => {
    if (!started || disposed) return;
    const entries = [...lists]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .flatMap(([server, tools]) => tools.map((tool) => ({ server, tool })))
      .filter(({ server, tool }) => {
        const problem = schemaProblem(tool.inputSchema);
        if (problem)
          log(`mcp: the tool ${JSON.stringify(String(tool.name).slice(0, 200))} of ${server} is left out: ${problem}`);
        return !problem;
      });
    const next = JSON.stringify(entries);
    if (next === signature) return; // a reconnect that lists the same tools leaves the catalog's bytes alone
    signature = next;
    const names = mcpToolNames(entries.map((e) => ({ server: e.server, tool: e.tool.name })));
    const defer = entries.length > (options.deferOver ?? 5);
    const tools = entries.map((e) =>
      mcpTool(connections.get(e.server)!, e.tool, names.get(toolKey({ server: e.server, tool: e.tool.name }))!, defer),
    );
    registry.unregister(registered);
    registered = tools.map((t) => registry.register(t));
    for (const t of registered)
      if (t.failClosed) log(`mcp: tool ${t.name} is fail-closed (see the registry's problems)`);
  };

  // Last resort when the process exits without dispose (a crash): no child outlives it.
  const killChildren = () => {
    for (const c of connections.values()) c.kill();
  };

  if (options.configPath) {
    const config = await withoutAgentFolders(
      await loadMcpConfig(options.configPath),
      options.configPath,
      options.agentFolders ?? [],
    );
    for (const p of config.problems) log(`mcp: ${p}; starting without it`);
    process.on("exit", killChildren);
    await Promise.all(
      config.servers.map(async (cfg) => {
        const conn = new McpConnection(cfg, {
          connectTimeoutMs: options.connectTimeoutMs ?? 15_000,
          callTimeoutMs: options.callTimeoutMs ?? 120_000,
          backoff: options.backoff,
          log,
          onTools: (tools) => {
            lists.set(cfg.name, tools);
            sync();
          },
        });
        connections.set(cfg.name, conn);
        try {
          await conn.start();
          log(`mcp: ${cfg.name} started with ${lists.get(cfg.name)?.length ?? 0} tool(s)`);
        } catch (e) {
          connections.delete(cfg.name);
          lists.delete(cfg.name);
          await conn.close();
          log(`mcp: the MCP server ${cfg.name} did not start: ${(e as Error).message}; its tools are absent`);
        }
      }),
    );
  }
  started = true;
  sync();

  return {
    connections,
    tools: () => registered,
    async dispose() {
      if (disposed) return;
      disposed = true;
      registry.unregister(registered);
      registered = [];
      await Promise.all([...connections.values()].map((c) => c.close()));
      process.off("exit", killChildren);
    },
  };
}
