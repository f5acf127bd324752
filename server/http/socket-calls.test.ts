// A tRPC socket that sends calls by the thousand is ended before the main thread takes them one
// by one: a message of more calls than a page ever sends at once, or more calls than the
// socket's rate allows. A socket that sends what the IDE sends goes on. The real server (accounts
// off: the loopback owner), real WebSockets.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startQuiver, type Quiver } from "../app";
import { testServerEnv } from "../testing/env";
import { trpcClients } from "../testing/trpc";
import { CALL_BOUNDS } from "./socket-calls";

const root = join(import.meta.dirname, "..", "..");

describe("calls a socket sends", () => {
  let quiver: Quiver;
  let dataDir: string;
  let sessionId: string;
  const lines: string[] = [];
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "quiver-socket-calls-"));
    quiver = await startQuiver({ env: testServerEnv(dataDir), root, web: false, log: (l) => lines.push(l) });
    const { ws, client } = trpcClients(quiver.url);
    sessionId = (await client.sessions.create.mutate({ title: "followed" })).id;
    ws.close();
  }, 60_000);
  afterAll(async () => {
    await quiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const subscription = (id: number) => ({
    id,
    method: "subscription",
    params: { path: "turns.events", input: { sessionId, lastSeq: 0 } },
  });

  /** A socket, what it received, and whether the server closed it. */
  async function socket(): Promise<{ ws: WebSocket; frames: () => number; closed: () => boolean }> {
    const ws = new WebSocket(`${quiver.url.replace("http", "ws")}/api/trpc`);
    let frames = 0;
    let closed = false;
    ws.on("message", () => frames++);
    ws.on("close", () => (closed = true));
    ws.on("error", () => {});
    await new Promise((r) => ws.once("open", r));
    return { ws, frames: () => frames, closed: () => closed };
  }

  it("ends a socket whose one message carries thousands of calls", async () => {
    const s = await socket();
    s.ws.send(JSON.stringify(Array.from({ length: 25_000 }, (_, i) => subscription(i + 1))));
    await expect.poll(s.closed, { timeout: 10_000 }).toBe(true);
    expect(lines.join("\n")).toMatch(/too many calls: 25000 calls in one message, more than 256/);
    // Ended before any was taken: nothing was answered.
    expect(s.frames()).toBe(0);
  }, 30_000);

  it("ends a socket past its rate, message by small message", async () => {
    const s = await socket();
    const messages = Math.ceil(CALL_BOUNDS.burst / 100) + 2;
    for (let m = 0; m < messages && !s.closed(); m++)
      s.ws.send(JSON.stringify(Array.from({ length: 100 }, (_, i) => subscription(m * 100 + i + 1))));
    await expect.poll(s.closed, { timeout: 10_000 }).toBe(true);
    expect(lines.join("\n")).toMatch(/too many calls: more than 1000 calls at once/);
    // Its bucket refills before the next case.
    await new Promise((r) => setTimeout(r, (CALL_BOUNDS.burst / CALL_BOUNDS.perSecond) * 1000 + 200));
  }, 30_000);

  it("counts the rate over all of one person's sockets, not each on its own", async () => {
    const sockets = await Promise.all(Array.from({ length: 8 }, () => socket()));
    // 8 sockets × 150 calls: under the bound for any one of them, over it together.
    for (const [n, s] of sockets.entries())
      for (let m = 0; m < 3; m++)
        s.ws.send(JSON.stringify(Array.from({ length: 50 }, (_, i) => subscription(n * 1000 + m * 50 + i + 1))));
    await expect.poll(() => sockets.filter((s) => s.closed()).length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(lines.join("\n")).toMatch(/from its sockets together/);
    for (const s of sockets) s.ws.terminate();
    // Once the bucket has refilled, the same person is served again.
    await new Promise((r) => setTimeout(r, (CALL_BOUNDS.burst / CALL_BOUNDS.perSecond) * 1000 + 200));
  }, 30_000);

  it("leaves a socket that sends what a page sends", async () => {
    const s = await socket();
    s.ws.send(JSON.stringify([subscription(1), subscription(2), subscription(3)]));
    for (let i = 4; i <= 10; i++) s.ws.send(JSON.stringify(subscription(i)));
    await expect.poll(s.frames, { timeout: 10_000 }).toBeGreaterThanOrEqual(10);
    await new Promise((r) => setTimeout(r, 300));
    expect(s.closed()).toBe(false);
    s.ws.close();
  }, 30_000);
});
