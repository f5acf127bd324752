// The WebSocket half of the preview bridge: one PreviewSocket per browser WebSocket on a preview
// host, relayed as preview.ws.* frames to the runner, which opens its own to the port. Messages
// from the app count against the window until the browser has taken them (acknowledged), and
// messages to the app until the runner has written them; the handshake has a deadline.
import { randomUUID } from "node:crypto";
import { PREVIEW_WINDOW, type PreviewErrorCode, type PreviewRunnerFrame } from "../protocol/preview";
import type { PreviewConnection } from "./bridge";

export interface PreviewSocketRequest {
  port: number;
  path: string;
  headers: Array<[string, string]>;
  protocols: string[];
  /** Absolute ms since epoch, for the handshake. */
  deadline: number;
  /** The session's workspace (absent: the runner's default folder); set by the bridge. */
  workspaceId?: string;
}

export interface PreviewSocketHandlers {
  opened(protocol: string): void;
  /** Call `socket.ack(bytes)` once the browser has taken it. */
  message(data: Buffer | string, binary: boolean, bytes: number): void;
  closed(close: { code?: number; reason?: string; error?: { code: PreviewErrorCode; message: string } }): void;
  /** The runner wrote messages upstream: more may be sent. */
  drain?(): void;
}

export interface PreviewSocket {
  readonly id: string;
  /** False when the window is full (wait for `drain`). */
  send(data: Buffer | string, binary: boolean): boolean;
  ack(bytes: number): void;
  close(code?: number, reason?: string): void;
}

interface Entry {
  conn: PreviewConnection;
  handlers: PreviewSocketHandlers;
  unacked: number;
  timer?: NodeJS.Timeout;
}

/** After the handshake deadline the runner has this long to report its own timeout. */
const GRACE_MS = 2_000;

export class SocketStreams {
  private readonly entries = new Map<string, Entry>();

  get size(): number {
    return this.entries.size;
  }

  open(
    conn: PreviewConnection,
    sessionId: string,
    req: PreviewSocketRequest,
    handlers: PreviewSocketHandlers,
  ): PreviewSocket | undefined {
    const id = `pws_${randomUUID()}`;
    const entry: Entry = { conn, handlers, unacked: 0 };
    entry.timer = setTimeout(
      () => {
        conn.send({ type: "preview.ws.close", streamId: id });
        this.finish(id, {
          error: { code: "timeout", message: `port ${req.port} did not accept the WebSocket in time` },
        });
      },
      Math.max(0, req.deadline - Date.now()) + GRACE_MS,
    );
    this.entries.set(id, entry);
    if (!conn.send({ type: "preview.ws.open", streamId: id, sessionId, ...req })) {
      this.finish(id);
      return undefined;
    }
    const live = () => this.entries.get(id) === entry;
    return {
      id,
      send: (data, binary) => {
        if (!live()) return false;
        const payload = typeof data === "string" ? data : data.toString("base64");
        conn.send({ type: "preview.ws.send", streamId: id, data: payload, binary });
        entry.unacked += typeof data === "string" ? Buffer.byteLength(data) : data.length;
        return entry.unacked < PREVIEW_WINDOW;
      },
      ack: (bytes) => void (bytes > 0 && live() && conn.send({ type: "preview.ack", streamId: id, bytes })),
      close: (code, reason) => {
        if (!live()) return;
        conn.send({
          type: "preview.ws.close",
          streamId: id,
          ...(code ? { code } : {}),
          ...(reason ? { reason: reason.slice(0, 123) } : {}),
        });
        this.finish(id);
      },
    };
  }

  /** True when the frame was a socket's (handled here). */
  fromRunner(conn: PreviewConnection, frame: PreviewRunnerFrame): boolean {
    const entry = this.entries.get(frame.streamId);
    if (!entry || entry.conn !== conn) return frame.type.startsWith("preview.ws.");
    switch (frame.type) {
      case "preview.ws.opened":
        clearTimeout(entry.timer);
        entry.handlers.opened(frame.protocol);
        return true;
      case "preview.ws.message": {
        const data = frame.binary ? Buffer.from(frame.data, "base64") : frame.data;
        entry.handlers.message(data, frame.binary, typeof data === "string" ? Buffer.byteLength(data) : data.length);
        return true;
      }
      case "preview.ws.closed":
        this.finish(frame.streamId, { code: frame.code, reason: frame.reason, error: frame.error });
        return true;
      case "preview.ack": {
        const was = entry.unacked;
        entry.unacked = Math.max(0, entry.unacked - frame.bytes);
        if (was >= PREVIEW_WINDOW && entry.unacked < PREVIEW_WINDOW) entry.handlers.drain?.();
        return true;
      }
      default:
        return false;
    }
  }

  runnerGone(conn: PreviewConnection, reason: string): void {
    for (const [id, e] of [...this.entries])
      if (e.conn === conn)
        this.finish(id, { error: { code: "reset", message: `the runner disconnected (${reason})` } });
  }

  dispose(): void {
    for (const [id, e] of [...this.entries]) {
      e.conn.send({ type: "preview.ws.close", streamId: id, code: 1001 });
      this.finish(id, { code: 1001, reason: "server shutting down" });
    }
  }

  /** Ends once; without `close` the browser side ended it and hears nothing. */
  private finish(id: string, close?: Parameters<PreviewSocketHandlers["closed"]>[0]): void {
    const e = this.entries.get(id);
    if (!e) return;
    this.entries.delete(id);
    clearTimeout(e.timer);
    if (close) e.handlers.closed(close);
  }
}
