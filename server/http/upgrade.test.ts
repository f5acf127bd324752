// The server's edges, started for real on port 0: WebSocket upgrades to paths nobody serves are
// answered (after the Host guard) instead of left hanging; tRPC errors carry no stack or install
// path outside development; and a server bound to another loopback address (HOST=127.0.0.2)
// still gets its local runner, whose Host the guard accepts and whose token works.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testServerEnv } from "../testing/env";
import { startQuiver, type Quiver } from "../app";

const root = join(import.meta.dirname, "../..");

/** Sends a raw upgrade request and returns what came back before the socket closed (or "" after 3 s). */
function rawUpgrade(
  port: number,
  path: string,
  host: string,
  address = "127.0.0.1",
  origin?: string,
): Promise<{ answer: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, address);
    let answer = "";
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ answer, closed: false });
    }, 3_000);
    socket.on("data", (d) => (answer += d.toString()));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ answer, closed: true });
    });
    socket.on("error", () => {});
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${origin === undefined ? "" : `Origin: ${origin}\r\n`}\r\n`,
    );
  });
}

async function start(vars: Record<string, string>): Promise<{ quiver: Quiver; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), "quiver-edge-"));
  const env = testServerEnv(dataDir, { ...vars });
  return { quiver: await startQuiver({ env, root, web: false, log: () => {} }), dataDir };
}

describe("a server on 127.0.0.1", () => {
  let quiver: Quiver;
  let dataDir: string;
  beforeAll(async () => ({ quiver, dataDir } = await start({})));
  afterAll(async () => {
    await quiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers an upgrade to an unknown path with 404 and closes it", async () => {
    for (const path of ["/nope", "/api/trpcx", "/_next/webpack-hmr", "/runner/x"]) {
      const { answer, closed } = await rawUpgrade(quiver.port, path, `127.0.0.1:${quiver.port}`);
      expect(answer, path).toMatch(/^HTTP\/1\.1 404 /);
      expect(closed, path).toBe(true);
    }
  });

  it("refuses every browser socket opened from another origin (the loopback owner's, without a cookie)", async () => {
    const host = `127.0.0.1:${quiver.port}`;
    const preview = `8123-s1.localhost:${quiver.port}`;
    const origins = [
      "https://attacker.example",
      "null",
      `http://${host}.attacker.example`,
      `http://localhost:${quiver.port}`,
      `http://${preview}`, // a previewed app reaching for Quiver's own sockets
    ];
    for (const path of ["/api/trpc", "/terminal?session=s1&term=t1", "/terminal?session=s1&list=1"])
      for (const origin of origins) {
        const { answer } = await rawUpgrade(quiver.port, path, host, "127.0.0.1", origin);
        expect(answer, `${path} from ${origin}`).toMatch(/^HTTP\/1\.1 403 [^]*is not this server/);
      }
    // A preview's own sockets take only the preview's own origin.
    for (const origin of ["https://attacker.example", `http://${host}`]) {
      const { answer } = await rawUpgrade(quiver.port, "/", preview, "127.0.0.1", origin);
      expect(answer, `preview from ${origin}`).toMatch(/^HTTP\/1\.1 403 [^]*is not this server/);
    }
    // The IDE's own origin is let through to the socket's own checks.
    const same = await rawUpgrade(quiver.port, "/api/trpc", host, "127.0.0.1", `http://${host}`);
    expect(same.answer).toMatch(/^HTTP\/1\.1 101 /);
  });

  it("checks the Host of an upgrade to an unknown path first", async () => {
    const { answer, closed } = await rawUpgrade(quiver.port, "/nope", "attacker.example");
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer).toContain("not allowed");
    expect(closed).toBe(true);
  });

  it("sends tRPC errors without a stack or the install's path", async () => {
    const res = await fetch(
      `${quiver.url}/api/trpc/sessions.get?input=${encodeURIComponent(JSON.stringify({ id: "nope" }))}`,
    );
    const body = await res.text();
    expect(res.status).toBe(404);
    expect(body).toContain("NOT_FOUND");
    expect(body).not.toContain("stack");
    expect(body).not.toContain(root);
    // A bad input: zod's error, still without a stack.
    const bad = await fetch(
      `${quiver.url}/api/trpc/sessions.get?input=${encodeURIComponent(JSON.stringify({ id: 7 }))}`,
    );
    const badBody = await bad.text();
    expect(bad.status).toBe(400);
    expect(badBody).not.toContain("stack");
    expect(badBody).not.toContain(root);
  });
});

describe("a development server", () => {
  it("keeps the stack in tRPC errors", async () => {
    const { quiver, dataDir } = await start({ NODE_ENV: "development" });
    try {
      const res = await fetch(
        `${quiver.url}/api/trpc/sessions.get?input=${encodeURIComponent(JSON.stringify({ id: "nope" }))}`,
      );
      expect(await res.text()).toContain('"stack"');
    } finally {
      await quiver.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("HOST=127.0.0.2", () => {
  it("answers on that address and its local runner connects with a working token", async () => {
    const { quiver, dataDir } = await start({ HOST: "127.0.0.2", QUIVER_LOCAL_RUNNER: "1" });
    try {
      expect(quiver.url).toBe(`http://127.0.0.2:${quiver.port}`);
      const deadline = Date.now() + 30_000;
      let body: { ok?: boolean; runners?: { connected: boolean }[] } = {};
      while (Date.now() < deadline) {
        const res = await fetch(`${quiver.url}/api/health`);
        body = await res.json();
        if (body.ok) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(body.runners?.[0]?.connected).toBe(true);
      expect(body.ok).toBe(true);
      // Another loopback literal is still a host this server was not told about.
      const other = await rawUpgrade(quiver.port, "/api/trpc", `127.0.0.3:${quiver.port}`, "127.0.0.2");
      expect(other.answer).toMatch(/^HTTP\/1\.1 403 /);
    } finally {
      await quiver.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
