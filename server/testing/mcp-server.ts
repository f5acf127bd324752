// TEST FIXTURE: a real MCP server built on the SDK's own Server class, started by the MCP tests
// as a child process with tsx: over stdio by default, over Streamable HTTP with `--http <port>`
// (it prints `listening <port>`). The low-level Server is used because the tests need raw JSON
// Schemas (to see them sanitised) and a paginated tools/list. Never used by the product.
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";

const PAGE = 3;
const obj = (properties: Record<string, object> = {}, required: string[] = []) => ({
  type: "object" as const,
  properties,
  required,
});
const ro = { readOnlyHint: true };

const tools: Tool[] = [
  {
    name: "echo",
    description: "Echoes the text back.",
    inputSchema: obj({ text: { type: "string" } }, ["text"]),
    annotations: ro,
  },
  // No annotations: a client must ask before running it. The schema has the shapes sanitize.ts folds.
  {
    name: "write_note",
    description: "Stores a note.",
    inputSchema: obj({ note: { type: "string" }, tag: { anyOf: [{ type: "string" }, { type: "null" }] } }, [
      "note",
      "ghost",
    ]),
  },
  { name: "fail", description: "Always fails.", inputSchema: obj(), annotations: ro },
  {
    name: "sleep",
    description: "Waits, then answers.",
    inputSchema: obj({ ms: { type: "number" } }, ["ms"]),
    annotations: ro,
  },
  { name: "crash", description: "Exits the server process mid-call.", inputSchema: obj(), annotations: ro },
  {
    name: "stats",
    description: "This process's pid and how many calls were cancelled.",
    inputSchema: obj(),
    annotations: ro,
  },
  {
    name: "add_tool",
    description: "Adds the tool late and says the list changed.",
    inputSchema: obj(),
    annotations: ro,
  },
  {
    name: "rich",
    description: "Returns an image, a resource and structured content.",
    inputSchema: obj(),
    annotations: { readOnlyHint: true, openWorldHint: true },
  },
  { name: "odd name.v2", description: "A tool whose name needs sanitising.", inputSchema: obj(), annotations: ro },
];

let cancelled = 0;
const servers = new Set<Server>();

async function call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
  const text = (t: string): CallToolResult => ({ content: [{ type: "text", text: t }] });
  switch (name) {
    case "echo":
      return text(String(args.text));
    case "write_note":
      return text(`noted: ${String(args.note)}${args.tag ? ` #${String(args.tag)}` : ""}`);
    case "fail":
      return { content: [{ type: "text", text: "it broke: the widget is missing" }], isError: true };
    case "sleep":
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, Number(args.ms));
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          cancelled++;
          reject(new Error("cancelled"));
        });
      });
      return text(`slept ${String(args.ms)} ms`);
    case "crash":
      setTimeout(() => process.exit(3), 50);
      return new Promise(() => undefined);
    case "stats":
      return text(JSON.stringify({ pid: process.pid, cancelled }));
    case "add_tool":
      if (!tools.some((t) => t.name === "late"))
        tools.push({ name: "late", description: "Arrived late.", inputSchema: obj(), annotations: ro });
      for (const s of servers) await s.sendToolListChanged();
      return text("added");
    case "rich":
      return {
        content: [
          { type: "image", data: Buffer.from("not really a png").toString("base64"), mimeType: "image/png" },
          { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "resource text" } },
        ],
        structuredContent: { answer: 42 },
      };
    case "odd name.v2":
      return text("odd ok");
    case "late":
      return text("late ok");
    default:
      return { content: [{ type: "text", text: `no tool ${name}` }], isError: true };
  }
}

function newServer(): Server {
  const server = new Server(
    { name: "quiver-test", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true } } },
  );
  server.setRequestHandler(ListToolsRequestSchema, async (req) => {
    const start = Number(req.params?.cursor ?? 0);
    const next = start + PAGE;
    return { tools: tools.slice(start, next), ...(next < tools.length ? { nextCursor: String(next) } : {}) };
  });
  server.setRequestHandler(CallToolRequestSchema, (req, extra) =>
    call(req.params.name, req.params.arguments ?? {}, extra.signal),
  );
  servers.add(server);
  server.onclose = () => servers.delete(server);
  return server;
}

const at = process.argv.indexOf("--http");
if (at < 0) {
  await newServer().connect(new StdioServerTransport());
} else {
  // One transport and Server per HTTP session, as the SDK's stateful mode expects.
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (req, res) => {
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (!transport) {
      if (id !== undefined) {
        res.writeHead(404).end("unknown session");
        return;
      }
      const t = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sid) => void sessions.set(sid, t),
      });
      t.onclose = () => t.sessionId && sessions.delete(t.sessionId);
      await newServer().connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res);
  });
  http.listen(Number(process.argv[at + 1] ?? 0), "127.0.0.1", () => {
    const address = http.address();
    process.stdout.write(`listening ${typeof address === "object" && address ? address.port : 0}\n`);
  });
}
