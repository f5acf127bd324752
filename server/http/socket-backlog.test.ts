// A client that subscribes to a session's events and stops reading (its keep-alive could still
// answer) is ended once its unsent bytes pass the bound, instead of having the server hold every
// event of the turn for it; a client that reads the same stream is not. The real server, real
// WebSockets; the turn's events are posted to the hub as the engine posts them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startQuiver, type Quiver } from "../app";
import { testServerEnv } from "../testing/env";
import { trpcClients } from "../testing/trpc";
import { MAX_UNSENT_BYTES } from "./socket-backlog";

const root = join(import.meta.dirname, "..", "..");
// The reading client, in a thread of its own: it reads as a browser does, whatever the server's
// loop is doing (in this thread it could read only between the server's own bursts).
const READER = `
const { parentPort, workerData } = require("node:worker_threads");
const WebSocket = require("ws");
const { url, sessionId, subscriptions } = workerData;
const ws = new WebSocket(url);
let received = 0, frames = 0, closed = false;
ws.on("message", (m) => { received += m.length; frames += 1; });
ws.on("close", () => { closed = true; });
ws.on("error", () => {});
ws.on("open", () => {
  for (let id = 1; id <= subscriptions; id++)
    ws.send(JSON.stringify({ id, method: "subscription", params: { path: "turns.events", input: { sessionId, lastSeq: 0 } } }));
  parentPort.postMessage({ open: true });
});
setInterval(() => parentPort.postMessage({ received, frames, closed }), 20);
parentPort.on("message", () => { ws.close(); setTimeout(() => process.exit(0), 50); });
`;
const SUBSCRIPTIONS = 64;

describe("a socket that stops reading", () => {
  let quiver: Quiver;
  let dataDir: string;
  const lines: string[] = [];
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "quiver-backlog-"));
    quiver = await startQuiver({ env: testServerEnv(dataDir), root, web: false, log: (l) => lines.push(l) });
  }, 60_000);
  afterAll(async () => {
    await quiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A socket with SUBSCRIPTIONS subscriptions to the session's events, and what it received. */
  async function subscriber(sessionId: string): Promise<{ ws: WebSocket; received(): number; closed(): boolean }> {
    const ws = new WebSocket(`${quiver.url.replace("http", "ws")}/api/trpc`);
    let received = 0;
    let closed = false;
    ws.on("message", (m: Buffer) => (received += m.length));
    ws.on("close", () => (closed = true));
    ws.on("error", () => {});
    await new Promise((r) => ws.once("open", r));
    for (let id = 1; id <= SUBSCRIPTIONS; id++)
      ws.send(
        JSON.stringify({
          id,
          method: "subscription",
          params: { path: "turns.events", input: { sessionId, lastSeq: 0 } },
        }),
      );
    return { ws, received: () => received, closed: () => closed };
  }

  it("is ended past the bound, while one reading the same turn is not", async () => {
    const { ws: api, client } = trpcClients(quiver.url);
    const session = await client.sessions.create.mutate({ title: "a long turn" });
    api.close();
    const stalled = await subscriber(session.id);
    const reader = new Worker(READER, {
      eval: true,
      workerData: {
        url: `${quiver.url.replace("http", "ws")}/api/trpc`,
        sessionId: session.id,
        subscriptions: SUBSCRIPTIONS,
      },
    });
    const reading = { received: 0, frames: 0, closed: false };
    await new Promise<void>((resolve) =>
      reader.on("message", (m: { open?: boolean; received?: number; frames?: number; closed?: boolean }) => {
        if (m.open) return resolve();
        reading.received = m.received!;
        reading.frames = m.frames!;
        reading.closed = m.closed!;
      }),
    );
    await new Promise((r) => setTimeout(r, 500));
    (stalled.ws as unknown as { _socket: { pause(): void } })._socket.pause();

    const heapBefore = process.memoryUsage().heapUsed;
    const text = "x".repeat(200);
    // 64 subscriptions × ~300 bytes a frame: the bound is passed well before the last token.
    const tokens = Math.ceil((4 * MAX_UNSENT_BYTES) / (SUBSCRIPTIONS * 300));
    // A few tokens between turns of the loop, and never more than a quarter of the bound ahead of
    // what the reader has: a browser reads while the server writes, and on a loaded machine the
    // reader's thread could otherwise fall a bound behind and be ended as if it had stopped.
    let framesSent = 0;
    const bytesAhead = () => (framesSent - reading.frames) * 300;
    for (let i = 0; i < tokens; i += 10) {
      for (let j = 0; j < 10; j++)
        quiver.services.hub.post(session.id, { type: "text.delta", turnId: "t1", text }, () => {});
      framesSent += 10 * SUBSCRIPTIONS;
      await new Promise((r) => setImmediate(r));
      while (bytesAhead() > MAX_UNSENT_BYTES / 4 && !reading.closed) await new Promise((r) => setTimeout(r, 20));
    }
    await expect
      .poll(() => lines.some((l) => /a socket that stopped reading was ended/.test(l)), { timeout: 20_000 })
      .toBe(true);
    expect(lines.filter((l) => /stopped reading/.test(l))).toHaveLength(1);
    // The reader got the whole turn (each token once per subscription), and kept its socket.
    await expect.poll(() => reading.received, { timeout: 30_000 }).toBeGreaterThan(tokens * SUBSCRIPTIONS * 200);
    expect(reading.closed).toBe(false);
    // What the stalled socket would have held is not held.
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(2 * MAX_UNSENT_BYTES + 64 * 1024 * 1024);
    stalled.ws.terminate();
    reader.postMessage("stop");
    await new Promise((r) => reader.once("exit", r));
  }, 120_000);
});
