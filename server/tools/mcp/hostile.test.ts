// A hostile MCP server (a real child process speaking raw JSON-RPC over stdio) whose tools/list
// carries schema bombs: 20,000 nested levels, a 300,000-value enum. Before, the first overflowed
// the stack while the tool set was built (startMcp threw, and the server would not start) and the
// second put megabytes into every model request. Now each such tool is left out with a log line,
// the server's other tools are kept, and the catalog stays small. Its answer to a call never
// ends (one line growing without a newline): the SDK's stdio reader stops at 10 MB and closes
// the connection, so the call fails at once instead of the server's memory filling.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ToolRegistry } from "../registry";
import { startMcp, type McpClients } from "./index";

const SERVER = `
import { createInterface } from "node:readline";
const N = 20000;
const deep = '{"type":"object","properties":{"a":'.repeat(N) + '{"type":"string"}' + "}}".repeat(N);
const values = JSON.stringify(Array.from({ length: 300000 }, (_, i) => "value-" + i));
const tools = '[{"name":"deep","inputSchema":{"type":"object","properties":{"x":' + deep + '}}},' +
  '{"name":"huge","inputSchema":{"type":"object","properties":{"x":{"enum":' + values + '}}}},' +
  '{"name":"fine","description":"Fine.","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}}]';
createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  const answer = (result) => process.stdout.write('{"jsonrpc":"2.0","id":' + JSON.stringify(m.id) + ',"result":' + result + "}\\n");
  if (m.method === "initialize")
    answer(JSON.stringify({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "h", version: "1" } }));
  else if (m.method === "tools/list") answer('{"tools":' + tools + "}");
  // An answer that never ends: 16 MB of one JSON string, no newline, the process staying up.
  else if (m.method === "tools/call") {
    process.stdout.write('{"jsonrpc":"2.0","id":' + JSON.stringify(m.id) + ',"result":{"content":[{"type":"text","text":"');
    const chunk = "x".repeat(64 * 1024);
    for (let i = 0; i < 256; i++) process.stdout.write(chunk);
    setInterval(() => undefined, 1000);
  }
});
`;

const registry = new ToolRegistry();
const logs: string[] = [];
let dir: string;
let mcp: McpClients;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "quiver-mcp-hostile-"));
  writeFileSync(join(dir, "server.mjs"), SERVER);
  writeFileSync(
    join(dir, "mcp.json"),
    JSON.stringify({ mcpServers: { h: { command: process.execPath, args: [join(dir, "server.mjs")] } } }),
  );
  mcp = await startMcp({
    configPath: join(dir, "mcp.json"),
    registry,
    log: (l) => logs.push(l),
    connectTimeoutMs: 60_000,
  });
}, 90_000);
afterAll(async () => {
  await mcp?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe("schema bombs from an MCP server", () => {
  it("leave out only the tools that carry them, saying why", () => {
    expect(registry.tools().map((t) => t.name)).toEqual(["mcp__h__fine"]);
    expect(logs).toContain('mcp: the tool "deep" of h is left out: its input schema nests deeper than 64 levels');
    expect(logs).toContain('mcp: the tool "huge" of h is left out: its input schema is over 64 KB');
  });

  it("an answer that never ends is cut at the SDK's 10 MB read buffer: the call fails at once, saying so", async () => {
    const started = Date.now();
    const r = await mcp.connections
      .get("h")!
      .call("fine", {}, AbortSignal.timeout(60_000))
      .then(
        (v) => ({ ok: true as const, text: JSON.stringify(v).slice(0, 200) }),
        (e: Error) => ({ ok: false as const, text: e.message }),
      );
    expect(r.ok, r.text).toBe(false);
    expect(r.text).toContain("The MCP server h exited during the call to fine");
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 90_000);

  it("keep the catalog small", () => {
    expect(JSON.stringify(registry.catalog()).length).toBeLessThan(20_000);
  });
});
