// A terminal's sockets count against the same bound of sockets per person as the IDE's tRPC ones:
// each is fed its terminal's output and replayed its scrollback, and they were not counted at all.
// The real server (accounts off: the loopback owner) with a bound of 3, real WebSockets.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startQuiver, type Quiver } from "../app";
import { TERMINAL_PATH } from "../protocol/terminal";
import { testServerEnv } from "../testing/env";
import { trpcClients } from "../testing/trpc";
import { SOCKET_LIMITS } from "./socket-limits";

const root = join(import.meta.dirname, "..", "..");

describe("terminal sockets", () => {
  let quiver: Quiver;
  let dataDir: string;
  let sessionId: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "quiver-terminal-sockets-"));
    quiver = await startQuiver({
      env: testServerEnv(dataDir),
      root,
      web: false,
      log: () => {},
      socketLimits: { ...SOCKET_LIMITS, ownerSockets: 3 },
    });
    const { ws, client } = trpcClients(quiver.url);
    sessionId = (await client.sessions.create.mutate({ title: "terminals" })).id;
    ws.close();
  }, 60_000);
  afterAll(async () => {
    await quiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Opens a socket at `path`: open, or refused with the upgrade's status. */
  const open = (path: string) =>
    new Promise<{ ws: WebSocket; status: number }>((resolve) => {
      const ws = new WebSocket(`${quiver.url.replace("http", "ws")}${path}`);
      ws.on("open", () => resolve({ ws, status: 101 }));
      ws.on("unexpected-response", (_req, res) => {
        res.resume();
        resolve({ ws, status: res.statusCode ?? 0 });
      });
      ws.on("error", () => {});
    });

  it("share the person's bound with the IDE's sockets, and give their place back when closed", async () => {
    const list = `${TERMINAL_PATH}?session=${encodeURIComponent(sessionId)}&list=1`;
    const ide = await open("/api/trpc");
    const first = await open(list);
    const second = await open(list);
    expect([ide.status, first.status, second.status]).toEqual([101, 101, 101]);
    expect((await open(list)).status).toBe(429);
    expect((await open("/api/trpc")).status).toBe(429);
    second.ws.close();
    await expect
      .poll(async () => {
        const again = await open(list);
        again.ws.close();
        return again.status;
      })
      .toBe(101);
    ide.ws.close();
    first.ws.close();
  }, 30_000);
});
