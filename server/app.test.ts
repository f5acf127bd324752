// The server as a whole, started on port 0 without the web app: health, tRPC over HTTP and
// WebSocket, the host/origin guard, and a clean stop.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "node:http";
import WebSocket from "ws";
import { createTRPCClient, createWSClient, httpBatchLink, wsLink } from "@trpc/client";
import { parseEnv } from "./env";
import { testServerEnv } from "./testing/env";
import { startQuiver, type Quiver } from "./app";
import type { AppRouter } from "./api/root";

const root = join(import.meta.dirname, "..");

describe("server", () => {
  let quiver: Quiver;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "quiver-app-"));
    const env = testServerEnv(dataDir);
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
  });
  afterAll(async () => {
    await quiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("reports the database in /api/health", async () => {
    const res = await fetch(`${quiver.url}/api/health`);
    const body = await res.json();
    expect(body.database).toEqual({ provider: "sqlite", up: true, writable: true });
    expect(body.ok).toBe(false); // no runner was started
  });

  it("creates and lists sessions over HTTP, and reads them over WebSocket", async () => {
    const http = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });
    const created = await http.sessions.create.mutate({ title: "first" });
    expect(created.title).toBe("first");
    expect((await http.sessions.list.query()).map((s) => s.id)).toContain(created.id);

    const wsClient = createWSClient({
      url: `${quiver.url.replace("http", "ws")}/api/trpc`,
      WebSocket: WebSocket as never,
    });
    try {
      const ws = createTRPCClient<AppRouter>({ links: [wsLink({ client: wsClient })] });
      expect((await ws.sessions.get.query({ id: created.id })).title).toBe("first");
    } finally {
      wsClient.close();
    }
  });

  it("answers a missing session with NOT_FOUND", async () => {
    const http = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });
    await expect(http.sessions.get.query({ id: "nope" })).rejects.toMatchObject({ data: { code: "NOT_FOUND" } });
  });

  it("refuses foreign hosts (DNS rebinding) and cross-site posts", async () => {
    // fetch() may not set Host; a raw request can, as a rebinding attacker's browser would.
    const rebind = await new Promise<number>((resolve, reject) =>
      request(`${quiver.url}/api/health`, { headers: { host: "attacker.example" } }, (res) =>
        resolve(res.statusCode ?? 0),
      )
        .on("error", reject)
        .end(),
    );
    expect(rebind).toBe(403);
    const crossSite = await fetch(`${quiver.url}/api/trpc/sessions.create`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: "https://attacker.example" },
      body: "{}",
    });
    expect(crossSite.status).toBe(403);
  });

  it("refuses a path not in its resolved form before any route reads it (HTTP and WebSocket)", async () => {
    const status = (path: string, headers: Record<string, string> = {}) =>
      new Promise<number>((resolve, reject) =>
        request(`${quiver.url}/`, { path, headers }, (res) => (res.resume(), resolve(res.statusCode ?? 0)))
          .on("error", reject)
          .end(),
      );
    for (const path of [
      "/api/trpc/../health",
      "/api/auth/reset-password/../get-session",
      "/api/auth/reset-password/%2e%2E/get-session",
      "/api/./health",
      "/api\\health",
      "//api/health",
    ])
      expect(await status(path), path).toBe(400);
    expect(await status("/api/health")).toBe(200);
    expect(await status("/api/health?x=../..")).toBe(200); // the query is not a path
    const upgrade = await status("/api/x/../trpc", { connection: "Upgrade", upgrade: "websocket" });
    expect(upgrade).toBe(400);
  });

  it("refuses a cross-site WebSocket before it opens", async () => {
    const ws = new WebSocket(`${quiver.url.replace("http", "ws")}/api/trpc`, {
      headers: { origin: "https://attacker.example" },
    });
    const outcome = await new Promise<string>((resolve) => {
      ws.on("open", () => resolve("open"));
      ws.on("unexpected-response", (_req, res) => resolve(String(res.statusCode)));
      ws.on("error", () => resolve("error"));
    });
    expect(outcome).toBe("403");
  });
});

describe("environment", () => {
  it("names the bad variable in one line", () => {
    expect(() => parseEnv({ PORT: "eighty" })).toThrow(/^Invalid PORT: .*"eighty"/);
    expect(() => parseEnv({ DATABASE_URL: "mysql://x" })).toThrow(/^Invalid DATABASE_URL/);
    expect(() => parseEnv({ QUIVER_RUNNER_TOKEN: "short" })).toThrow(
      /^Invalid QUIVER_RUNNER_TOKEN: must be at least 16/,
    );
  });
  it("treats empty values as unset", () => {
    expect(parseEnv({ PORT: "", QUIVER_PROVIDER: "" }).PORT).toBe(3000);
  });
});

describe("embedded mode", () => {
  it("spawns a local runner that connects back, and stop() leaves no runner process behind", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "quiver-embedded-"));
    const env = parseEnv({ PORT: "0", QUIVER_DATA_DIR: dataDir });
    const quiver = await startQuiver({ env, root, web: false, log: () => {} });
    try {
      const deadline = Date.now() + 30_000;
      let body: { ok: boolean; runners: { id: string; connected: boolean; workspace: string }[] } | undefined;
      while (Date.now() < deadline) {
        body = await (await fetch(`${quiver.url}/api/health`)).json();
        if (body?.ok) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(body?.ok).toBe(true);
      expect(body?.runners[0]).toMatchObject({ connected: true, workspace: join(dataDir, "workspace") });
      // Through a proxy loopback counts for nothing: a stranger reads the summary, over HTTP and
      // tRPC, which names no folder of the server's, placement or label.
      const proxied = { "x-forwarded-for": "203.0.113.7" };
      const stranger = await fetch(`${quiver.url}/api/health`, { headers: proxied });
      expect(stranger.status).toBe(200);
      const summary = await stranger.json();
      const overTrpc = await createTRPCClient<AppRouter>({
        links: [httpBatchLink({ url: `${quiver.url}/api/trpc`, headers: proxied })],
      }).health.get.query();
      for (const seen of [summary, overTrpc]) {
        expect(seen).toEqual({
          ok: true,
          database: { provider: "sqlite", up: true, writable: true },
          runners: [
            { id: body!.runners[0].id, connected: true, sandboxed: expect.any(Boolean), sandbox: expect.anything() },
          ],
          problems: [],
        });
        expect(JSON.stringify(seen)).not.toContain(dataDir);
      }
      const pid = quiver.localRunner?.pid;
      expect(pid).toBeGreaterThan(0);
      await quiver.stop();
      expect(processAlive(pid!)).toBe(false);
    } finally {
      await quiver.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
