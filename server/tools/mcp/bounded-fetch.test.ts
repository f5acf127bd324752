// An MCP server over HTTP answering with more than Quiver reads: the answer is cut off at the
// bound instead of being read whole (and then decoded, parsed and copied), whether it says its
// length or streams it; the call fails saying why. A real HTTP server speaking MCP's JSON-RPC
// enough for the SDK's own client and the transport the server opens (transport.ts).
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { boundedFetch, McpAnswerTooLarge } from "./bounded-fetch";
import { mcpSdk } from "./sdk";
import { openTransport } from "./transport";

const MAX = 1024 * 1024;
let server: Server | undefined;
afterEach(() => server?.close());

/** Answers initialize, takes notifications, and answers tools/call with `size` bytes of text. */
async function mcpServer(size: number, declareLength: boolean): Promise<string> {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      if (req.method !== "POST") return void res.writeHead(405).end();
      const msg = JSON.parse(body) as { id?: number; method: string };
      if (msg.id === undefined) return void res.writeHead(202).end();
      const result =
        msg.method === "initialize"
          ? { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "big", version: "1" } }
          : { content: [{ type: "text", text: "x".repeat(size) }] };
      const text = JSON.stringify({ jsonrpc: "2.0", id: msg.id, result });
      res.writeHead(200, {
        "content-type": "application/json",
        ...(declareLength ? { "content-length": Buffer.byteLength(text) } : {}),
      });
      // Streamed in pieces when no length is said, as a server writing a large answer does.
      if (declareLength) return void res.end(text);
      for (let i = 0; i < text.length; i += 64 * 1024) res.write(text.slice(i, i + 64 * 1024));
      res.end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

async function callThrough(url: string): Promise<string> {
  const sdk = await mcpSdk();
  const client = new sdk.Client({ name: "quiver-test", version: "1" });
  // The transport the server opens for a configured HTTP server, with a smaller bound.
  const { transport } = openTransport({ kind: "http", url, headers: {} }, sdk, MAX);
  await client.connect(transport);
  try {
    const r = await client.callTool({ name: "big", arguments: {} });
    return (r.content as { text: string }[])[0].text;
  } finally {
    await client.close();
  }
}

describe("an MCP server's answer over HTTP", () => {
  it("within the bound: read as it is", async () => {
    expect(await callThrough(await mcpServer(1000, true))).toHaveLength(1000);
  });

  it.each([
    ["says its length", true],
    ["streams it", false],
  ])("over the bound and %s: cut off, and the call fails saying why", async (_, declared) => {
    const url = await mcpServer(8 * MAX, declared);
    await expect(callThrough(url)).rejects.toThrow(/the MCP server's answer is over 1048576 bytes/);
  });

  it("is bounded for POSTs only: the notifications' GET stream is not", async () => {
    const url = await mcpServer(0, true);
    const base: typeof fetch = async () => new Response("y".repeat(2 * MAX), { status: 200 });
    const get = await boundedFetch(MAX, base)(url, { method: "GET" });
    expect((await get.text()).length).toBe(2 * MAX);
    await expect(boundedFetch(MAX, base)(url, { method: "POST" }).then((r) => r.text())).rejects.toBeInstanceOf(
      McpAnswerTooLarge,
    );
  });
});
