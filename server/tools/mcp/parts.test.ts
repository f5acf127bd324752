// The MCP client as the server wires it (server/parts.ts): QUIVER_MCP_CONFIG read at start-up,
// a bad file never stops the start, and dispose leaves no MCP child process behind.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { testServerEnv } from "../../testing/env";
import { createParts } from "../../parts";
import { useTestDb } from "../../testing/db";
import { SERVER_SCRIPT, childrenRunning, stdioEntry } from "../../testing/mcp";

describe("MCP servers in the server's parts", () => {
  const t = useTestDb("sqlite");
  const dir = mkdtempSync(join(tmpdir(), "quiver-mcp-parts-"));

  async function start(configPath: string) {
    const logs: string[] = [];
    const env = testServerEnv(dir, { DATABASE_URL: t.current.url, QUIVER_MCP_CONFIG: configPath });
    const parts = await createParts({
      env,
      db: t.current.db,
      rows: t.current.rows,
      dbProvider: t.current.provider,
      dbUrl: t.current.url,
      runnerTokens: ["x".repeat(32)],
      actorFor: () => null,
      canUseSession: async () => true,
      log: (l) => void logs.push(l),
    });
    return { parts, logs };
  }

  it("starts without a bad config file, and with a good one owns its children until dispose", async () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ mcpServers: { x: { url: "not a url" } } }));
    const first = await start(bad);
    expect(first.logs).toContainEqual(
      expect.stringMatching(
        /^mcp: .*bad\.json: server "x": url: url must be an http:\/\/ or https:\/\/ URL; starting without it$/,
      ),
    );
    await first.parts.dispose();

    const good = join(dir, "good.json");
    writeFileSync(good, JSON.stringify({ mcpServers: { one: stdioEntry(), two: stdioEntry() } }));
    const second = await start(good);
    expect(second.logs).toEqual(
      expect.arrayContaining(["mcp: one started with 9 tool(s)", "mcp: two started with 9 tool(s)"]),
    );
    expect(childrenRunning(SERVER_SCRIPT)).toHaveLength(2);
    await second.parts.dispose();
    expect(childrenRunning(SERVER_SCRIPT)).toEqual([]);
  });
});
