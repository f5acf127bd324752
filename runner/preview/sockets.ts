// The runner's half of WebSocket forwarding for the live preview (a dev server's hot reload):
// preview.ws.open becomes a WebSocket to ws://localhost:<port><path> over a socket the runner
// opened to the port as the HTTP proxy does (the workspace's namespace first), and messages
// flow both ways as preview.ws.* frames. Flow control is the HTTP proxy's: messages to the
// server stop at the window until it acknowledges them (the upstream socket is paused
// meanwhile), and messages written upstream are acknowledged.
import WebSocket from "ws";
import {
  endToEndHeaders,
  PREVIEW_WINDOW,
  PREVIEW_WS_MAX_MESSAGE,
  type PreviewRunnerFrame,
  type PreviewServerFrame,
} from "../../server/protocol/preview";
import { connectLoopback, refusedMessage, type PortConnector } from "./proxy";

interface Entry {
  id: string;
  ws?: WebSocket;
  unacked: number;
  timer?: NodeJS.Timeout;
  done: boolean;
}

type WsFrame = Extract<PreviewServerFrame, { type: `preview.ws.${string}` }>;

/** Headers the WebSocket client sets itself (the handshake's own). */
const HANDSHAKE = new Set([
  "host",
  "sec-websocket-key",
  "sec-websocket-version",
  "sec-websocket-extensions",
  "sec-websocket-protocol",
]);

const closeCode = (code: number | undefined) =>
  code !== undefined && (code === 1000 || (code >= 3000 && code <= 4999)) ? code : 1000;

export class PreviewSockets {
  private readonly sockets = new Map<string, Entry>();

  constructor(
    private readonly send: (frame: PreviewRunnerFrame) => boolean,
    private readonly connect: PortConnector = connectLoopback,
  ) {}

  get size(): number {
    return this.sockets.size;
  }

  has(streamId: string): boolean {
    return this.sockets.has(streamId);
  }

  handle(frame: WsFrame): void {
    if (frame.type === "preview.ws.open") {
      // Bad input (an invalid subprotocol list, say) must cost one socket, never the runner.
      return void this.open(frame).catch((err: Error) => {
        const e = this.sockets.get(frame.streamId);
        if (e) this.fail(e, "refused", `cannot open this WebSocket: ${err.message}`);
      });
    }
    const e = this.sockets.get(frame.streamId);
    if (!e?.ws) return;
    if (frame.type === "preview.ws.close") {
      e.ws.close(closeCode(frame.code), frame.reason);
      return this.finish(e);
    }
    const data = frame.binary ? Buffer.from(frame.data, "base64") : frame.data;
    const bytes = typeof data === "string" ? Buffer.byteLength(data) : data.length;
    e.ws.send(
      data,
      { binary: frame.binary },
      () => void (e.done || bytes === 0 || this.send({ type: "preview.ack", streamId: e.id, bytes })),
    );
  }

  ack(streamId: string, bytes: number): void {
    const e = this.sockets.get(streamId);
    if (!e) return;
    e.unacked = Math.max(0, e.unacked - bytes);
    if (e.ws?.isPaused && e.unacked < PREVIEW_WINDOW) e.ws.resume();
  }

  connectionLost(): void {
    for (const e of [...this.sockets.values()]) {
      e.ws?.terminate();
      this.finish(e);
    }
  }

  private async open(f: Extract<WsFrame, { type: "preview.ws.open" }>): Promise<void> {
    if (this.sockets.has(f.streamId)) return;
    const e: Entry = { id: f.streamId, unacked: 0, done: false };
    this.sockets.set(e.id, e);
    e.timer = setTimeout(
      () => this.fail(e, "timeout", `port ${f.port} did not accept the WebSocket in time`),
      Math.max(0, f.deadline - Date.now()),
    );
    let socket;
    try {
      socket = await this.connect(f.port, f.sessionId);
    } catch (err) {
      const refused = (err as NodeJS.ErrnoException).code === "ECONNREFUSED";
      return this.fail(
        e,
        refused ? "refused" : "reset",
        refused ? refusedMessage(err, f.port) : (err as Error).message,
      );
    }
    if (e.done) return void socket.destroy();
    const headers = Object.fromEntries(endToEndHeaders(f.headers).filter(([k]) => !HANDSHAKE.has(k.toLowerCase())));
    const ws = new WebSocket(`ws://localhost:${f.port}${f.path}`, f.protocols, {
      headers,
      createConnection: () => socket,
      maxPayload: PREVIEW_WS_MAX_MESSAGE,
      perMessageDeflate: false,
    });
    e.ws = ws;
    ws.on("unexpected-response", (_req, res) => {
      res.resume();
      this.fail(e, "refused", `port ${f.port} answered the WebSocket upgrade with HTTP ${res.statusCode}`);
    });
    ws.on("open", () => {
      clearTimeout(e.timer);
      if (!this.send({ type: "preview.ws.opened", streamId: e.id, protocol: ws.protocol })) this.finish(e);
    });
    ws.on("message", (data: Buffer, binary: boolean) => {
      if (e.done) return;
      this.send({
        type: "preview.ws.message",
        streamId: e.id,
        data: binary ? data.toString("base64") : data.toString("utf8"),
        binary,
      });
      e.unacked += data.length;
      if (e.unacked >= PREVIEW_WINDOW) ws.pause();
    });
    ws.on("close", (code, reason) => {
      if (e.done) return;
      this.send({
        type: "preview.ws.closed",
        streamId: e.id,
        code: closeCode(code),
        reason: reason.toString().slice(0, 123),
      });
      this.finish(e);
    });
    ws.on("error", (err) => this.fail(e, "reset", `WebSocket to port ${f.port}: ${err.message}`));
  }

  private fail(e: Entry, code: "refused" | "timeout" | "reset" | "invalid", message: string): void {
    if (e.done) return;
    this.send({ type: "preview.ws.closed", streamId: e.id, code: 1011, error: { code, message } });
    e.ws?.terminate();
    this.finish(e);
  }

  private finish(e: Entry): void {
    if (e.done) return;
    e.done = true;
    clearTimeout(e.timer);
    this.sockets.delete(e.id);
  }
}
