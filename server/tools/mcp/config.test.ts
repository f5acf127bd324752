import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadMcpConfig, parseMcpConfig } from "./config";
import { startMcp } from "./index";
import { ToolRegistry } from "../registry";
import { childrenRunning } from "../../testing/mcp";

const dir = mkdtempSync(join(tmpdir(), "quiver-mcp-config-"));

describe("MCP config file", () => {
  it("reads stdio and HTTP entries, resolving cwd against the file's folder", () => {
    const c = parseMcpConfig(
      {
        mcpServers: {
          files: { command: "npx", args: ["-y", "server-files"], env: { TOKEN: "x" }, cwd: "tools", disabled: false },
          web: {
            type: "http",
            url: "https://mcp.example.com/mcp",
            headers: { Authorization: "Bearer t" },
            timeoutMs: 5000,
          },
        },
      },
      "/etc/quiver",
    );
    expect(c.problems).toEqual([]);
    expect(c.servers).toEqual([
      {
        name: "files",
        transport: {
          kind: "stdio",
          command: "npx",
          args: ["-y", "server-files"],
          env: { TOKEN: "x" },
          cwd: "/etc/quiver/tools",
        },
        timeoutMs: undefined,
      },
      {
        name: "web",
        transport: { kind: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer t" } },
        timeoutMs: 5000,
      },
    ]);
  });

  it("one bad entry is a problem naming it; the others still count", () => {
    const c = parseMcpConfig(
      {
        mcpServers: {
          ok: { command: "srv" },
          neither: { args: [] },
          ftp: { url: "ftp://x" },
          old: { type: "sse", url: "http://x/sse" },
          "bad/name": { command: "x" },
          argsWrong: { command: "x", args: "not a list" },
        },
      },
      "/",
    );
    expect(c.servers.map((s) => s.name)).toEqual(["ok"]);
    expect(c.problems).toEqual([
      'server "neither": needs either "command" (stdio) or "url" (Streamable HTTP)',
      'server "ftp": url: url must be an http:// or https:// URL',
      'server "old": the old SSE transport is not supported; use Streamable HTTP (a "url") or stdio',
      'server "bad/name": the name must be 1-64 letters, digits, spaces, dots, dashes or underscores',
      expect.stringMatching(/^server "argsWrong": args: /),
    ]);
  });

  it("a missing, non-JSON or wrongly shaped file is one problem and no servers", async () => {
    const notJson = join(dir, "broken.json");
    writeFileSync(notJson, "{ mcpServers: ");
    const wrongShape = join(dir, "shape.json");
    writeFileSync(wrongShape, JSON.stringify({ servers: {} }));
    const missing = await loadMcpConfig(join(dir, "nope.json"));
    expect(missing).toEqual({ servers: [], problems: [expect.stringMatching(/cannot read .*nope\.json: ENOENT/)] });
    expect((await loadMcpConfig(notJson)).problems).toEqual([expect.stringMatching(/broken\.json is not valid JSON/)]);
    expect((await loadMcpConfig(wrongShape)).problems).toEqual([
      expect.stringMatching(/shape\.json: expected \{ "mcpServers"/),
    ]);
  });

  it("the client starts without a bad file: a log line, no tools, no throw", async () => {
    const path = join(dir, "bad.json");
    writeFileSync(path, "not json at all");
    const registry = new ToolRegistry();
    const logs: string[] = [];
    const mcp = await startMcp({ configPath: path, registry, log: (l) => logs.push(l) });
    expect(logs).toEqual([expect.stringMatching(/^mcp: .*bad\.json is not valid JSON.*; starting without it$/)]);
    expect(registry.tools()).toEqual([]);
    await mcp.dispose();
  });

  it("a server that never answers or exits at once is logged and left out", async () => {
    const path = join(dir, "stuck.json");
    const mcpServers = {
      silent: { command: "sleep", args: ["30"] },
      quitter: { command: process.execPath, args: ["-e", "console.error('no licence key'); process.exit(2)"] },
    };
    writeFileSync(path, JSON.stringify({ mcpServers }));
    const registry = new ToolRegistry();
    const logs: string[] = [];
    const started = Date.now();
    const mcp = await startMcp({ configPath: path, registry, log: (l) => logs.push(l), connectTimeoutMs: 800 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(logs.sort()).toEqual([
      "mcp: the MCP server quitter did not start: it closed the connection (stderr: no licence key); its tools are absent",
      "mcp: the MCP server silent did not start: it did not answer in time; its tools are absent",
    ]);
    expect(registry.tools()).toEqual([]);
    // the child that never answered is killed at once, not left to the SDK's seconds of grace
    for (let until = Date.now() + 1000; childrenRunning("sleep 30").length > 0 && Date.now() < until;)
      await new Promise((r) => setTimeout(r, 20));
    expect(childrenRunning("sleep 30")).toEqual([]);
    await mcp.dispose();
  });
});
