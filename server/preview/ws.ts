// WebSocket forwarding for the live preview, so a dev server's hot reload reaches the page: an
// upgrade on a preview host is held until the runner has opened its own WebSocket to the port
// (server/preview/socket-streams.ts), then completed with the subprotocol the app chose, and
// messages are relayed both ways with the bridge's flow control. If the app refuses or nothing
// listens, the browser gets an HTTP error instead of the upgrade.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { PREVIEW_WS_MAX_MESSAGE, type PreviewTarget } from "../protocol/preview";
import type { PreviewBridge } from "./bridge";

export interface PreviewWsDeps {
  bridge: PreviewBridge;
  /** Request headers as the app should see them (server/preview/http.ts). */
  headersFor(req: IncomingMessage, target: PreviewTarget): Array<[string, string]>;
  handshakeMs?: number;
}

const refuse = (socket: Duplex, status: string, message: string): void =>
  void socket.end(
    `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${message}\n`,
  );

export function createPreviewWs(deps: PreviewWsDeps) {
  const chosen = new WeakMap<IncomingMessage, string>();
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: PREVIEW_WS_MAX_MESSAGE,
    perMessageDeflate: false,
    handleProtocols: (_offered, req) => chosen.get(req) || false,
  });

  function relay(req: IncomingMessage, socket: Duplex, head: Buffer, t: PreviewTarget): void {
    const protocols = String(req.headers["sec-websocket-protocol"] ?? "")
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean);
    let browser: WebSocket | undefined;
    const early: Array<() => void> = [];
    const stream = deps.bridge.openSocket(
      t.sessionId,
      {
        port: t.port,
        path: req.url && req.url.startsWith("/") ? req.url : "/",
        headers: deps.headersFor(req, t),
        protocols,
        deadline: Date.now() + (deps.handshakeMs ?? 15_000),
      },
      {
        opened(protocol) {
          if (socket.destroyed) return stream?.close(1001);
          if (protocol) chosen.set(req, protocol);
          wss.handleUpgrade(req, socket, head, (ws) => {
            browser = ws;
            ws.on("message", (data: Buffer, binary: boolean) => {
              if (!stream?.send(binary ? data : data.toString("utf8"), binary)) ws.pause();
            });
            ws.on("close", (code, reason) => stream?.close(code, reason.toString()));
            ws.on("error", () => ws.terminate());
            for (const f of early.splice(0)) f();
          });
        },
        message(data, binary, bytes) {
          const deliver = () => browser?.send(data, { binary }, () => stream?.ack(bytes));
          if (browser) deliver();
          else early.push(deliver);
        },
        closed({ code, reason, error }) {
          if (browser) return browser.close(code ?? 1000, reason);
          refuse(
            socket,
            error?.code === "timeout" ? "504 Gateway Timeout" : "502 Bad Gateway",
            error?.message ?? "the app closed the WebSocket",
          );
        },
        drain: () => browser?.resume(),
      },
    );
    if (!stream) return refuse(socket, "502 Bad Gateway", "the runner of this session is not connected");
    socket.once("close", () => {
      if (!browser) stream.close(1001);
    });
  }

  return {
    relay,
    dispose(): void {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}
