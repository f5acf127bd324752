// The MCP SDK's run-time parts (client, transports, errors), loaded by the first connection to a
// configured MCP server rather than at the server's start: with ajv and its formats they are
// about 190 files, a few hundred milliseconds of every start whether or not MCP is used.
// Everything else here imports only the SDK's types.
export type McpSdk = Awaited<ReturnType<typeof load>>;

async function load() {
  const [client, http, stdio, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]);
  return {
    Client: client.Client,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    StreamableHTTPError: http.StreamableHTTPError,
    StdioClientTransport: stdio.StdioClientTransport,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
  };
}

let loading: Promise<McpSdk> | undefined;
let loaded: McpSdk | undefined;

export function mcpSdk(): Promise<McpSdk> {
  return (loading ??= load().then(
    (sdk) => (loaded = sdk),
    (err) => {
      loading = undefined;
      throw err;
    },
  ));
}

/** The SDK once loaded, else undefined (then no error can be one of its errors). */
export const loadedMcpSdk = (): McpSdk | undefined => loaded;
