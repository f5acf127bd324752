// ${VAR} and ${VAR:-default} in the MCP config file (expand.ts through config.ts).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadMcpConfig, parseMcpConfig } from "./config";
import { expandString } from "./expand";

describe("${VAR} in the MCP config", () => {
  it("expands command, args, env, url and headers; keys, cwd and other fields stay as written", () => {
    const vars = { BIN: "/opt/mcp/bin", TOKEN: "s3cr3t", HOST: "mcp.internal", EMPTY: "" };
    const c = parseMcpConfig(
      {
        mcpServers: {
          files: {
            command: "${BIN}/files",
            args: ["--root", "${ROOT:-/srv}", "$BIN", "${EMPTY:-fallback}", "${EMPTY}x"],
            env: { "${KEY}": "t=${TOKEN}" },
            cwd: "${BIN}",
          },
          web: {
            url: "https://${HOST}:${PORT:-8443}/mcp",
            headers: { Authorization: "Bearer ${TOKEN}", "X-Team": "${TEAM:-core}" },
          },
        },
      },
      "/etc/quiver",
      vars,
    );
    expect(c.problems).toEqual([]);
    expect(c.servers[0].transport).toEqual({
      kind: "stdio",
      command: "/opt/mcp/bin/files",
      args: ["--root", "/srv", "$BIN", "fallback", "x"],
      env: { "${KEY}": "t=s3cr3t" },
      cwd: "/etc/quiver/${BIN}",
    });
    expect(c.servers[1].transport).toEqual({
      kind: "http",
      url: "https://mcp.internal:8443/mcp",
      headers: { Authorization: "Bearer s3cr3t", "X-Team": "core" },
    });
  });

  it("an unset variable without a default skips that server with a problem naming both; the others load", () => {
    const c = parseMcpConfig(
      {
        mcpServers: {
          github: { command: "gh-mcp", env: { GITHUB_TOKEN: "${GITHUB_TOKEN}" } },
          docs: { url: "https://docs/mcp", headers: { Authorization: "Bearer ${DOCS_KEY}" } },
          local: { command: "srv", args: ["${PORT:-9000}"] },
        },
      },
      "/",
      {},
    );
    expect(c.servers.map((s) => s.name)).toEqual(["local"]);
    expect(c.problems).toEqual([
      'server "github": ${GITHUB_TOKEN} in env.GITHUB_TOKEN is not set and has no default (write ${GITHUB_TOKEN:-default} to give one)',
      'server "docs": ${DOCS_KEY} in headers.Authorization is not set and has no default (write ${DOCS_KEY:-default} to give one)',
    ]);
  });

  it("a url that is only valid once expanded is checked after expansion", () => {
    const ok = parseMcpConfig({ mcpServers: { a: { url: "${MCP_URL}" } } }, "/", { MCP_URL: "http://127.0.0.1:9/mcp" });
    expect(ok.servers[0].transport).toMatchObject({ url: "http://127.0.0.1:9/mcp" });
    const bad = parseMcpConfig({ mcpServers: { a: { url: "${MCP_URL}" } } }, "/", { MCP_URL: "ftp://x" });
    expect(bad.problems).toEqual(['server "a": url: url must be an http:// or https:// URL']);
  });

  it("reads the server's environment by default when loading the file", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "quiver-mcp-expand-")), "mcp.json");
    writeFileSync(
      path,
      JSON.stringify({
        mcpServers: {
          s: { command: "srv", args: ["${QUIVER_TEST_MCP_ARG}"] },
          t: { command: "${QUIVER_TEST_MCP_UNSET}" },
        },
      }),
    );
    process.env.QUIVER_TEST_MCP_ARG = "from-env";
    delete process.env.QUIVER_TEST_MCP_UNSET;
    try {
      const c = await loadMcpConfig(path);
      expect(c.servers.map((s) => s.transport)).toEqual([
        { kind: "stdio", command: "srv", args: ["from-env"], env: {} },
      ]);
      expect(c.problems).toEqual([
        expect.stringMatching(/mcp\.json: server "t": \$\{QUIVER_TEST_MCP_UNSET\} in command is not set/),
      ]);
    } finally {
      delete process.env.QUIVER_TEST_MCP_ARG;
    }
  });

  it("expandString: several references, defaults with spaces and colons, malformed ones left alone", () => {
    const vars = { A: "1", B: "2" };
    expect(expandString("${A}-${B}-${A}", vars)).toEqual({ value: "1-2-1" });
    expect(expandString("${C:-a b:c/d}", vars)).toEqual({ value: "a b:c/d" });
    expect(expandString("${1A} ${A ${", vars)).toEqual({ value: "${1A} ${A ${" });
    expect(expandString("x${C}y${D}", vars)).toEqual({ missing: "C" });
  });
});
