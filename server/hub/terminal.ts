// The terminal bridge: a WebSocket path (/terminal) that connects the IDE's xterm to a PTY on
// the session's runner. Each (session, term id) keeps its PTY and a bounded scrollback here, so
// a dropped socket that reconnects within the grace period re-attaches to the same shell and
// gets exactly the output it missed; after the grace period the PTY is closed.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { PtyChannel } from "../executors/runner/pty";
import {
  TERMINAL_PATH,
  TerminalClientMessage,
  TerminalQuery,
  type TerminalServerMessage,
} from "../protocol/terminal";
import { decodeFrame } from "../protocol/runner";

export interface TerminalBridgeDeps {
  pty: { open(sessionId: string, size: { cols: number; rows: number }): PtyChannel };
  /** True when the person behind this upgrade may use the session. */
  authorize(req: IncomingMessage, sessionId: string): Promise<boolean>;
  /** How long a PTY waits for its socket to come back (default 30 s). */
  graceMs?: number;
  /** Characters of output kept for replay (default 256 K). */
  scrollbackChars?: number;
  log?(line: string): void;
}

export interface TerminalBridge {
  readonly path: string;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Live PTYs, for tests and diagnostics. */
  size(): number;
  dispose(): void;
}

interface Entry {
  key: string;
  channel: PtyChannel;
  buffer: string;
  /** Output offset of buffer[0]; `total` is the offset just past its end. */
  start: number;
  total: number;
  ws?: WebSocket;
  grace?: NodeJS.Timeout;
  unlisten: Array<() => void>;
}

export function createTerminalBridge(deps: TerminalBridgeDeps): TerminalBridge {
  const graceMs = deps.graceMs ?? 30_000;
  const cap = deps.scrollbackChars ?? 256 * 1024;
  const log = deps.log ?? (() => {});
  const wss = new WebSocketServer({ noServer: true, maxPayload: 2 * 1024 * 1024 });
  const entries = new Map<string, Entry>();

  const send = (ws: WebSocket | undefined, msg: TerminalServerMessage) => {
    if (ws && ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
  };

  function end(entry: Entry): void {
    if (entries.get(entry.key) !== entry) return;
    entries.delete(entry.key);
    clearTimeout(entry.grace);
    for (const off of entry.unlisten) off();
  }

  function open(key: string, sessionId: string, cols: number, rows: number): Entry {
    const channel = deps.pty.open(sessionId, { cols, rows });
    const entry: Entry = { key, channel, buffer: "", start: 0, total: 0, unlisten: [] };
    entry.unlisten.push(
      channel.onData((data) => {
        entry.buffer += data;
        entry.total += data.length;
        if (entry.buffer.length > cap) {
          const cut = entry.buffer.length - cap;
          entry.buffer = entry.buffer.slice(cut);
          entry.start += cut;
        }
        send(entry.ws, { type: "data", data });
      }),
      channel.onExit((exit) => {
        send(entry.ws, { type: "exit", exitCode: exit.exitCode, ...(exit.signal ? { signal: exit.signal } : {}) });
        entry.ws?.close(1000, "shell exited");
        end(entry);
      }),
    );
    entries.set(key, entry);
    return entry;
  }

  function attach(ws: WebSocket, q: TerminalQuery): void {
    const key = `${q.session}\u0000${q.term}`;
    let entry = entries.get(key);
    if (entry) {
      clearTimeout(entry.grace);
      entry.grace = undefined;
      // A second tab with the same term id takes the terminal over.
      if (entry.ws && entry.ws !== ws) entry.ws.close(4000, "attached elsewhere");
      entry.channel.resize(q.cols, q.rows);
    } else {
      try {
        entry = open(key, q.session, q.cols, q.rows);
      } catch (err) {
        send(ws, { type: "error", message: (err as Error).message });
        ws.close(4003, "no runner");
        return;
      }
    }
    const current = entry;
    current.ws = ws;
    // Replay only what the client has not shown; if it asks for more than we kept, start over.
    const resumable = q.offset >= current.start && q.offset <= current.total;
    const from = resumable ? q.offset : current.start;
    send(ws, { type: "attached", ptyId: current.channel.id, offset: from, reset: !resumable });
    if (current.total > from) send(ws, { type: "data", data: current.buffer.slice(from - current.start) });

    ws.on("message", (raw) => {
      const decoded = decodeFrame(TerminalClientMessage, raw);
      if (!decoded.ok) return send(ws, { type: "error", message: decoded.error });
      const msg = decoded.message;
      if (current.ws !== ws) return;
      if (msg.type === "input") current.channel.write(msg.data);
      else if (msg.type === "resize") current.channel.resize(msg.cols, msg.rows);
      else {
        current.channel.close();
        end(current);
      }
    });
    ws.on("close", () => {
      if (current.ws !== ws) return;
      current.ws = undefined;
      if (entries.get(key) !== current) return;
      current.grace = setTimeout(() => {
        log(`terminal ${current.channel.id}: no client for ${graceMs} ms, closing its PTY`);
        current.channel.close();
        end(current);
      }, graceMs);
    });
  }

  type TerminalQuery = ReturnType<typeof TerminalQuery.parse>;

  return {
    path: TERMINAL_PATH,
    handleUpgrade(req, socket, head) {
      const url = new URL(req.url ?? "/", "http://localhost");
      const parsed = TerminalQuery.safeParse(Object.fromEntries(url.searchParams));
      if (!parsed.success) {
        socket.end(`HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n${parsed.error.issues[0]?.message ?? "bad query"}\n`);
        return;
      }
      const q = parsed.data;
      deps.authorize(req, q.session).then(
        (ok) => {
          if (!ok) return void socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\nno such session\n");
          wss.handleUpgrade(req, socket, head, (ws) => attach(ws, q));
        },
        () => socket.destroy(),
      );
    },
    size: () => entries.size,
    dispose() {
      for (const entry of [...entries.values()]) {
        entry.channel.close();
        entry.ws?.terminate();
        end(entry);
      }
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}
