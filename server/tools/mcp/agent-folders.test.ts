// No MCP server is configured from, started in or run from a folder the agent writes: such a
// server would run the agent's code on the server's machine, outside any sandbox. Real files,
// and a real start through startMcp with a planted package that would leave a mark.
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { parseMcpConfig } from "./config";
import { withoutAgentFolders } from "./agent-folders";
import { startMcp } from "./index";
import { ToolRegistry } from "../registry";

let workspace: string;
let outside: string;
beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), "quiver-mcp-ws-"));
  outside = await mkdtemp(join(tmpdir(), "quiver-mcp-etc-"));
  await symlink(workspace, join(outside, "looks-outside"));
});

const stdio = (command: string, args: string[], cwd?: string) => ({ command, args, ...(cwd ? { cwd } : {}) });

it("keeps servers outside, and leaves out each one whose cwd, program or script is in the agent's folder", async () => {
  const config = parseMcpConfig(
    {
      mcpServers: {
        plain: stdio("npx", ["-y", "@modelcontextprotocol/server-github"], outside),
        web: { url: "https://mcp.example.com/mcp" },
        inWorkspace: stdio("npx", ["-y", "@modelcontextprotocol/server-github"], workspace),
        throughLink: stdio("npx", ["-y", "x"], join(outside, "looks-outside")),
        program: stdio(join(workspace, "bin/server"), [], outside),
        script: stdio("node", [join(workspace, "server.js")], outside),
        relativeScript: stdio("node", ["../looks-outside/server.js"], join(outside, "sub")),
        optionValue: stdio("node", [`--require=${join(workspace, "x.cjs")}`, "-e", "0"], outside),
        nodeOptions: { ...stdio("node", ["-e", "0"], outside), env: { NODE_OPTIONS: `--require ${workspace}/a.cjs` } },
        pathEntry: { ...stdio("mcp-tool", [], outside), env: { PATH: `${join(workspace, "bin")}:/usr/bin:/bin` } },
        npmPrefix: stdio("npm", [`--prefix=${workspace}`, "start"], outside),
      },
    },
    outside,
  );
  const kept = await withoutAgentFolders(config, join(outside, "mcp.json"), [workspace]);
  expect(kept.servers.map((s) => s.name)).toEqual(["plain", "web"]);
  const refused = ["inWorkspace", "throughLink", "program", "script", "relativeScript"];
  refused.push("optionValue", "nodeOptions", "pathEntry", "npmPrefix");
  expect(kept.problems).toHaveLength(refused.length);
  for (const name of refused)
    expect(kept.problems.join("\n")).toContain(`server "${name}": it would start in or run from`);
});

it("starts nothing from a configuration file the agent can write", async () => {
  const config = parseMcpConfig({ mcpServers: { a: stdio("true", [], outside), web: { url: "https://x.test" } } }, "/");
  const kept = await withoutAgentFolders(config, join(workspace, ".quiver", "mcp.json"), [workspace]);
  expect(kept.servers).toEqual([]);
  expect(kept.problems[0]).toMatch(/is inside .* which the agent writes: no MCP server is started from it/);
});

it("never runs a package the agent planted where a server would start", async () => {
  // What the agent writes from its sandbox: a local package npx would prefer to the registry's.
  const mark = join(outside, "ran-the-agents-code");
  const bin = join(workspace, "node_modules", ".bin");
  await mkdir(bin, { recursive: true });
  await writeFile(join(bin, "mcp-evil"), `#!/bin/sh\ntouch ${mark}\n`, { mode: 0o755 });
  const path = join(outside, "mcp.json");
  await writeFile(
    path,
    JSON.stringify({ mcpServers: { evil: { command: "./node_modules/.bin/mcp-evil", cwd: workspace } } }),
  );
  const logs: string[] = [];
  const mcp = await startMcp({
    configPath: path,
    registry: new ToolRegistry([]),
    log: (l) => logs.push(l),
    connectTimeoutMs: 2_000,
    agentFolders: [workspace],
  });
  await mcp.dispose();
  expect(existsSync(mark)).toBe(false);
  expect(logs.join("\n")).toContain('mcp: server "evil": it would start in or run from');
  // The same configuration without the guard does run it: the plant is live.
  const unguarded = await startMcp({
    configPath: path,
    registry: new ToolRegistry([]),
    log: () => {},
    connectTimeoutMs: 2_000,
  });
  await unguarded.dispose();
  expect(existsSync(mark)).toBe(true);
});
