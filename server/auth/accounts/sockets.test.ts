// A person's socket ended by the registry (auth/accounts/sockets.ts) reads nothing more: a
// client that ignores the close frame and goes on sending (a terminal's keystrokes, a call)
// reaches no program, neither before the socket is destroyed nor when ws reads what is left
// at its close. Any WebSocket door works so (tRPC, terminals, previews): here a bare ws server.
import { afterEach, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import { createPeopleSockets } from "./sockets";
import { openRawTrpcSocket } from "../../testing/raw-socket";
import type { Db } from "../../db";

let server: Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

it("drops what a client sends after its socket was ended", async () => {
  const sockets = createPeopleSockets({ db: {} as Db, recheckMs: 60_000 });
  const wss = new WebSocketServer({ noServer: true });
  const heard: string[] = [];
  server = createServer();
  server.on("upgrade", (req, socket, head) => {
    sockets.register(socket, { authSessionId: "d1", userId: "u1", orgId: "o1", role: "member" });
    wss.handleUpgrade(req, socket, head, (ws) => ws.on("message", (m) => heard.push(m.toString())));
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const raw = await openRawTrpcSocket(url, "c=1", "/terminal");
  try {
    raw.send("before");
    await expect.poll(() => heard).toEqual(["before"]);
    await sockets.end({ userId: "u1", orgId: "o1" }, "removed from the org");
    raw.send("rm -rf ~\r");
    raw.send("after");
    // Past the registry's destroy (250 ms), when ws reads what the socket still holds.
    await new Promise((r) => setTimeout(r, 500));
    expect(heard).toEqual(["before"]);
    expect(raw.closeCode()).toBe(4401);
  } finally {
    raw.destroy();
    sockets.dispose();
    wss.close();
  }
});
