// Server side of the preview's runner channel: one PreviewStream per forwarded HTTP request and
// one PreviewSocket per forwarded WebSocket, multiplexed over the session's runner connection as
// preview.* frames. It routes frames, keeps the flow-control counts, enforces deadlines, and
// ends every stream of a runner that disconnects. It knows nothing of HTTP or of the browser's
// sockets; server/preview/http.ts and server/preview/ws.ts drive it.
import { randomUUID } from "node:crypto";
import { PREVIEW_CHUNK, PREVIEW_WINDOW, type PreviewErrorCode, type PreviewRunnerFrame } from "../protocol/preview";
import {
  SocketStreams,
  type PreviewSocketHandlers,
  type PreviewSocketRequest,
  type PreviewSocket,
} from "./socket-streams";

export type { PreviewSocket, PreviewSocketHandlers, PreviewSocketRequest };
import type { ServerToRunner } from "../protocol/runner";

/** The slice of a runner connection the bridge needs. */
export interface PreviewConnection {
  readonly id: string;
  send(frame: ServerToRunner): boolean;
}

export interface PreviewRequest {
  port: number;
  method: string;
  path: string;
  headers: Array<[string, string]>;
  hasBody: boolean;
  /** Absolute ms since epoch. */
  deadline: number;
}

export interface PreviewHandlers {
  head(status: number, headers: Array<[string, string]>): void;
  /** A chunk of the response body; call `stream.ack(chunk.length)` once the browser took it. */
  data(chunk: Buffer): void;
  end(error?: { code: PreviewErrorCode; message: string }): void;
  /** The runner took request-body bytes: more may be sent. */
  drain?(): void;
}

export interface PreviewStream {
  readonly id: string;
  /** Sends request-body bytes; false when the window is full (wait for `drain`). */
  write(chunk: Buffer, end: boolean): boolean;
  ack(bytes: number): void;
  /** The browser went away: the runner drops the upstream request. */
  cancel(): void;
}

interface Entry {
  conn: PreviewConnection;
  handlers: PreviewHandlers;
  unacked: number;
  timer: NodeJS.Timeout;
}

/** After the deadline the runner has this long to report its own timeout. */
const GRACE_MS = 2_000;

export class PreviewBridge {
  private readonly streams = new Map<string, Entry>();
  private readonly sockets = new SocketStreams();

  constructor(
    private readonly connectionFor: (sessionId: string) => PreviewConnection | undefined,
    /** The session's workspace on that runner (absent: its default folder): its ports only. */
    private readonly workspaceOf: (sessionId: string) => string | undefined = () => undefined,
  ) {}

  /** HTTP streams and WebSockets in flight. */
  get size(): number {
    return this.streams.size + this.sockets.size;
  }

  /** A WebSocket to the port; undefined when the session's runner is not connected. */
  openSocket(sessionId: string, req: PreviewSocketRequest, handlers: PreviewSocketHandlers): PreviewSocket | undefined {
    const conn = this.connectionFor(sessionId);
    const workspaceId = this.workspaceOf(sessionId);
    return conn ? this.sockets.open(conn, sessionId, workspaceId ? { ...req, workspaceId } : req, handlers) : undefined;
  }

  /** Undefined when the session's runner is not connected. */
  open(sessionId: string, req: PreviewRequest, handlers: PreviewHandlers): PreviewStream | undefined {
    const conn = this.connectionFor(sessionId);
    if (!conn) return undefined;
    const id = `pv_${randomUUID()}`;
    const timer = setTimeout(
      () => {
        conn.send({ type: "preview.cancel", streamId: id });
        this.finish(id, { code: "timeout", message: `port ${req.port} did not finish answering before the deadline` });
      },
      Math.max(0, req.deadline - Date.now()) + GRACE_MS,
    );
    const entry: Entry = { conn, handlers, unacked: 0, timer };
    this.streams.set(id, entry);
    const workspaceId = this.workspaceOf(sessionId);
    if (
      !conn.send({ type: "preview.request", streamId: id, sessionId, ...(workspaceId ? { workspaceId } : {}), ...req })
    ) {
      this.finish(id);
      return undefined;
    }
    const live = () => this.streams.get(id) === entry;
    return {
      id,
      write: (chunk, end) => {
        if (!live()) return false;
        for (let at = 0; at < chunk.length || (at === 0 && end); at += PREVIEW_CHUNK) {
          const piece = chunk.subarray(at, at + PREVIEW_CHUNK);
          const last = end && at + PREVIEW_CHUNK >= chunk.length;
          conn.send({ type: "preview.body", streamId: id, data: piece.toString("base64"), end: last });
          entry.unacked += piece.length;
          if (last) break;
        }
        return entry.unacked < PREVIEW_WINDOW;
      },
      ack: (bytes) => void (bytes > 0 && live() && conn.send({ type: "preview.ack", streamId: id, bytes })),
      cancel: () => {
        if (!live()) return;
        conn.send({ type: "preview.cancel", streamId: id });
        this.finish(id);
      },
    };
  }

  fromRunner(conn: PreviewConnection, frame: PreviewRunnerFrame): void {
    if (this.sockets.fromRunner(conn, frame)) return;
    const entry = this.streams.get(frame.streamId);
    if (!entry || entry.conn !== conn) return;
    switch (frame.type) {
      case "preview.head":
        return entry.handlers.head(frame.status, frame.headers);
      case "preview.data":
        return entry.handlers.data(Buffer.from(frame.data, "base64"));
      case "preview.ack": {
        const was = entry.unacked;
        entry.unacked = Math.max(0, entry.unacked - frame.bytes);
        if (was >= PREVIEW_WINDOW && entry.unacked < PREVIEW_WINDOW) entry.handlers.drain?.();
        return;
      }
      case "preview.end":
        return this.finish(frame.streamId, frame.error, true);
      default:
        return;
    }
  }

  runnerGone(conn: PreviewConnection, reason: string): void {
    this.sockets.runnerGone(conn, reason);
    for (const [id, entry] of [...this.streams]) {
      if (entry.conn === conn) this.finish(id, { code: "reset", message: `the runner disconnected (${reason})` });
    }
  }

  dispose(): void {
    this.sockets.dispose();
    for (const [id, entry] of [...this.streams]) {
      entry.conn.send({ type: "preview.cancel", streamId: id });
      this.finish(id, { code: "cancelled", message: "the server is shutting down" });
    }
  }

  /** Ends a stream once; the handlers hear of it unless the browser side ended it (cancel). */
  private finish(id: string, error?: { code: PreviewErrorCode; message: string }, fromRunner = false): void {
    const entry = this.streams.get(id);
    if (!entry) return;
    this.streams.delete(id);
    clearTimeout(entry.timer);
    if (error || fromRunner) entry.handlers.end(error);
  }
}
