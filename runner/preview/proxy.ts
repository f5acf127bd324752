// The runner's half of the live preview: each preview.request becomes one HTTP request to
// 127.0.0.1:<port> (or [::1]:<port> when only IPv6 loopback listens) in the workspace's network
// namespace, through its relay, or on this machine when nothing listens there (index.ts), and
// its response streams back as preview.head / preview.data / preview.end. The target is always a
// loopback: the frames carry a port and an origin-form path, never a host, and the socket is
// opened here before HTTP sees it. Each stream is bounded by the flow-control window
// in both directions, by its deadline, and dies with the server connection.
import { request as httpRequest, type ClientRequest, type IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import {
  endToEndHeaders,
  headerPairs,
  PREVIEW_CHUNK,
  PREVIEW_WINDOW,
  type PreviewErrorCode,
  type PreviewRunnerFrame,
  type PreviewServerFrame,
} from "../../server/protocol/preview";

export interface PreviewProxyOptions {
  /** Sends a frame to the server; false while disconnected. */
  send(frame: PreviewRunnerFrame): boolean;
  /** Streams open at once (default 256); more are answered `busy`. */
  maxStreams?: number;
  /** Time to get the response head once connected (default 60 s; the deadline still applies). */
  headTimeoutMs?: number;
  /** Opens the port (default: this machine's loopback; the runner's: the workspace's namespace first). */
  connect?: PortConnector;
}

/** Opens `port` for a preview of `sessionId` (whose origin it is: `<port>-<session>`). */
export type PortConnector = (port: number, sessionId: string) => Promise<Socket>;

interface Stream {
  id: string;
  socket?: Socket;
  req?: ClientRequest;
  res?: IncomingMessage;
  /** Response bytes sent and not yet acknowledged by the server. */
  unacked: number;
  /** Request body chunks that arrived before the connection was up. */
  early: Array<{ data: Buffer; end: boolean }>;
  timers: NodeJS.Timeout[];
  done: boolean;
}

const LOOPBACKS = ["127.0.0.1", "::1"] as const;

/** What the person reads when a port refused: the connector's own reason when it refused on purpose. */
export function refusedMessage(err: unknown, port: number): string {
  return (err as { reason?: string }).reason ?? `nothing listens on port ${port} on the runner's machine`;
}

/** Connects to the port on this machine's loopback: IPv4 first, then IPv6 (a dev server on `localhost` may bind ::1 only). */
export function connectLoopback(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const attempt = (i: number) => {
      const socket = connect({ host: LOOPBACKS[i], port });
      socket.once("connect", () => {
        socket.removeAllListeners("error");
        resolve(socket);
      });
      socket.once("error", (err: NodeJS.ErrnoException) => {
        socket.destroy();
        if (i + 1 < LOOPBACKS.length && (err.code === "ECONNREFUSED" || err.code === "EADDRNOTAVAIL")) attempt(i + 1);
        else reject(err);
      });
    };
    attempt(0);
  });
}

/** Keeps the head inside the frame schema's limits (a header past them is dropped, not the response). */
const fitHeaders = (list: Array<[string, string]>) =>
  list.filter(([k, v]) => k.length <= 256 && v.length <= 64 * 1024).slice(0, 500);

export class PreviewProxy {
  private readonly streams = new Map<string, Stream>();

  constructor(private readonly o: PreviewProxyOptions) {}

  get size(): number {
    return this.streams.size;
  }

  handle(frame: Exclude<PreviewServerFrame, { type: `preview.ws.${string}` }>): void {
    if (frame.type === "preview.request") {
      // Bad input must cost one request, never the runner (an unhandled rejection would end it).
      return void this.open(frame).catch((err: Error) => {
        const s = this.streams.get(frame.streamId);
        if (s) this.fail(s, "invalid", `cannot forward this request: ${err.message}`);
      });
    }
    const s = this.streams.get(frame.streamId);
    if (!s) return;
    if (frame.type === "preview.cancel") return this.finish(s);
    if (frame.type === "preview.ack") {
      s.unacked = Math.max(0, s.unacked - frame.bytes);
      if (s.res?.isPaused() && s.unacked < PREVIEW_WINDOW) s.res.resume();
      return;
    }
    const data = Buffer.from(frame.data, "base64");
    if (!s.req) s.early.push({ data, end: frame.end });
    else this.writeBody(s, data, frame.end);
  }

  /** The server connection went away: nobody reads these responses any more. */
  connectionLost(): void {
    for (const s of [...this.streams.values()]) this.finish(s);
  }

  dispose(): void {
    this.connectionLost();
  }

  private async open(f: Extract<PreviewServerFrame, { type: "preview.request" }>): Promise<void> {
    if (this.streams.has(f.streamId)) return;
    if (this.streams.size >= (this.o.maxStreams ?? 256)) {
      this.o.send({
        type: "preview.end",
        streamId: f.streamId,
        error: { code: "busy", message: "too many preview requests in flight on the runner" },
      });
      return;
    }
    const s: Stream = { id: f.streamId, unacked: 0, early: [], timers: [], done: false };
    this.streams.set(s.id, s);
    s.timers.push(
      setTimeout(
        () => this.fail(s, "timeout", `no complete answer from port ${f.port} before the deadline`),
        Math.max(0, f.deadline - Date.now()),
      ),
    );
    try {
      s.socket = await (this.o.connect ?? connectLoopback)(f.port, f.sessionId);
    } catch (err) {
      const refused = (err as NodeJS.ErrnoException).code === "ECONNREFUSED";
      return this.fail(
        s,
        refused ? "refused" : "reset",
        refused ? refusedMessage(err, f.port) : `cannot connect to port ${f.port}: ${(err as Error).message}`,
      );
    }
    if (s.done) return void s.socket.destroy();
    const socket = s.socket;
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of endToEndHeaders(f.headers)) {
      const key = k.toLowerCase();
      const prev = headers[key];
      headers[key] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    const req = httpRequest({
      method: f.method,
      path: f.path,
      headers,
      createConnection: () => socket,
      setHost: !("host" in headers),
    });
    s.req = req;
    const headTimer = setTimeout(
      () => this.fail(s, "timeout", `port ${f.port} accepted the connection but sent no response head`),
      this.o.headTimeoutMs ?? 60_000,
    );
    s.timers.push(headTimer);
    req.on("error", (err: NodeJS.ErrnoException) => this.fail(s, "reset", `port ${f.port}: ${err.message}`));
    req.on("response", (res) => {
      clearTimeout(headTimer);
      s.res = res;
      this.respond(s, res);
    });
    if (!f.hasBody) req.end();
    for (const { data, end } of s.early.splice(0)) this.writeBody(s, data, end);
  }

  private writeBody(s: Stream, data: Buffer, end: boolean): void {
    const req = s.req;
    if (!req || s.done) return;
    if (data.length)
      req.write(data, () => void (s.done || this.o.send({ type: "preview.ack", streamId: s.id, bytes: data.length })));
    if (end) req.end();
  }

  private respond(s: Stream, res: IncomingMessage): void {
    const sent = this.o.send({
      type: "preview.head",
      streamId: s.id,
      status: res.statusCode ?? 502,
      headers: fitHeaders(endToEndHeaders(headerPairs(res.rawHeaders))),
    });
    if (!sent) return this.finish(s);
    res.on("data", (chunk: Buffer) => {
      for (let at = 0; at < chunk.length; at += PREVIEW_CHUNK) {
        const piece = chunk.subarray(at, at + PREVIEW_CHUNK);
        if (!this.o.send({ type: "preview.data", streamId: s.id, data: piece.toString("base64") }))
          return this.finish(s);
        s.unacked += piece.length;
      }
      // The server acknowledges what the browser has taken; past the window, wait for it.
      if (s.unacked >= PREVIEW_WINDOW) res.pause();
    });
    res.on("end", () => {
      if (s.done) return;
      this.o.send({ type: "preview.end", streamId: s.id });
      this.finish(s);
    });
    res.on("error", (err) => this.fail(s, "reset", `the response from the port broke off: ${err.message}`));
    res.on("close", () => {
      if (!res.complete) this.fail(s, "reset", "the app closed the connection before the response was complete");
    });
  }

  private fail(s: Stream, code: PreviewErrorCode, message: string): void {
    if (s.done) return;
    this.o.send({ type: "preview.end", streamId: s.id, error: { code, message } });
    this.finish(s);
  }

  private finish(s: Stream): void {
    if (s.done) return;
    s.done = true;
    this.streams.delete(s.id);
    for (const t of s.timers) clearTimeout(t);
    s.req?.destroy();
    s.socket?.destroy();
  }
}
