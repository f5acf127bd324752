// The runner's WebSocket relay against a real WebSocket server on a real port: handshake with a
// subprotocol, text and binary both ways, closes from either side, a dead port, a refused upgrade.
import { createServer, type Server } from "node:http";
import { WebSocketServer } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PreviewRunnerFrame } from "../../server/protocol/preview";
import { PreviewSockets } from "./sockets";

let server: Server;
let wss: WebSocketServer;
let port: number;
const seenOrigins: string[] = [];

beforeAll(async () => {
  server = createServer((_req, res) => res.writeHead(404).end());
  wss = new WebSocketServer({ noServer: true, handleProtocols: (p) => (p.has("vite-hmr") ? "vite-hmr" : false) });
  server.on("upgrade", (req, socket, head) => {
    if (req.url !== "/hmr") return void socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
    seenOrigins.push(String(req.headers.origin));
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.send("connected");
      ws.on("message", (data, binary) => {
        if (!binary && data.toString() === "bye") return ws.close(4001, "asked to");
        ws.send(data, { binary });
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  for (const c of wss.clients) c.terminate();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function harness() {
  const frames: PreviewRunnerFrame[] = [];
  const sockets = new PreviewSockets((f) => (frames.push(f), true));
  const until = async (check: () => unknown, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end) throw new Error("timed out");
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const of = <T extends PreviewRunnerFrame["type"]>(type: T) =>
    frames.filter((f): f is Extract<PreviewRunnerFrame, { type: T }> => f.type === type);
  const open = (id: string, path = "/hmr", p = port) =>
    sockets.handle({
      type: "preview.ws.open",
      streamId: id,
      sessionId: "s",
      port: p,
      path,
      headers: [["Origin", `http://localhost:${p}`]],
      protocols: ["vite-hmr"],
      deadline: Date.now() + 5_000,
    });
  return { frames, sockets, until, of, open };
}

describe("preview WebSockets (runner side)", () => {
  it("opens with the app's subprotocol and relays text and binary both ways, acknowledging writes", async () => {
    const h = harness();
    h.open("w1");
    await h.until(() => h.of("preview.ws.opened").length);
    expect(h.of("preview.ws.opened")[0].protocol).toBe("vite-hmr");
    expect(seenOrigins.at(-1)).toBe(`http://localhost:${port}`);
    await h.until(() => h.of("preview.ws.message").length);
    expect(h.of("preview.ws.message")[0]).toMatchObject({ data: "connected", binary: false });
    h.sockets.handle({ type: "preview.ws.send", streamId: "w1", data: "hello", binary: false });
    h.sockets.handle({
      type: "preview.ws.send",
      streamId: "w1",
      data: Buffer.from([0, 1, 2, 255]).toString("base64"),
      binary: true,
    });
    await h.until(() => h.of("preview.ws.message").length === 3);
    const [, text, bin] = h.of("preview.ws.message");
    expect(text).toMatchObject({ data: "hello", binary: false });
    expect(Buffer.from(bin.data, "base64")).toEqual(Buffer.from([0, 1, 2, 255]));
    await h.until(() => h.of("preview.ack").reduce((n, f) => n + f.bytes, 0) === 9);
    // The app closes: the server hears its code and reason.
    h.sockets.handle({ type: "preview.ws.send", streamId: "w1", data: "bye", binary: false });
    await h.until(() => h.of("preview.ws.closed").length);
    expect(h.of("preview.ws.closed")[0]).toMatchObject({ code: 4001, reason: "asked to" });
    expect(h.sockets.size).toBe(0);
  });

  it("closes the app's socket when the browser closes", async () => {
    const h = harness();
    const before = wss.clients.size;
    h.open("w2");
    await h.until(() => h.of("preview.ws.opened").length);
    h.sockets.handle({ type: "preview.ws.close", streamId: "w2", code: 1000 });
    expect(h.sockets.size).toBe(0);
    await h.until(() => wss.clients.size === before);
  });

  it("fails one socket with an invalid subprotocol list instead of the runner", async () => {
    const h = harness();
    h.sockets.handle({
      type: "preview.ws.open",
      streamId: "bad",
      sessionId: "s",
      port,
      path: "/hmr",
      headers: [],
      protocols: ["a", "a"],
      deadline: Date.now() + 5_000,
    });
    await h.until(() => h.of("preview.ws.closed").length);
    expect(h.of("preview.ws.closed")[0].error?.message).toContain("cannot open this WebSocket");
    expect(h.sockets.size).toBe(0);
  });

  it("reports a dead port and a refused upgrade as errors", async () => {
    const h = harness();
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", () => r()));
    const dead = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    h.open("d", "/hmr", dead);
    h.open("r", "/not-a-socket");
    await h.until(() => h.of("preview.ws.closed").length === 2);
    const byId = Object.fromEntries(h.of("preview.ws.closed").map((f) => [f.streamId, f.error]));
    expect(byId.d).toEqual({ code: "refused", message: `nothing listens on port ${dead} on the runner's machine` });
    expect(byId.r).toEqual({ code: "refused", message: `port ${port} answered the WebSocket upgrade with HTTP 404` });
    expect(h.sockets.size).toBe(0);
  });
});
