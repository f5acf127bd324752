// The terminal bridge: a WebSocket path (/terminal) that connects the IDE's xterms to PTYs on
// the session's runner. Terminals belong to the session, not to a page: each (session, term id)
// keeps its PTY and a bounded scrollback here; any number of pages attach to it at once (output
// goes to all, input comes from any), and with no page attached it keeps running (a dev server
// in it keeps serving) until the idle limit, then its PTY is closed; the runner is told whether a
// page shows it (watched), so one at its terminal limit closes the terminal unseen longest to
// open another. Why a terminal ended (exited with a code, the idle limit, closed to make room,
// its runner lost, closed by a person) is kept for the last few per session, so a page that
// comes back is told instead of silently getting a new shell. A list socket per page gets the session's terminals whenever they change. Input has
// backpressure: while the PTY channel's input window is full (the program is not reading), the
// terminal's sockets are not read (ws pause), so a paste or a flood waits in the client's TCP;
// a page leaving meanwhile is noticed by pinging (terminal-liveness.ts).
// Output, its scrollback and its flow control (a page that falls behind is closed) are
// terminal-output.ts's.
import type { IncomingMessage } from "node:http";
import { randomUUID } from "node:crypto";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { PtyChannel, PtyExit } from "../executors/runner/pty";
import {
  TERMINAL_PATH,
  TerminalClientMessage,
  TerminalQuery,
  type TerminalEnd,
  type TerminalInfo,
  type TerminalServerMessage,
} from "../protocol/terminal";
import { decodeFrame } from "../protocol/runner";
import { createTerminalOutput, type OutputPage, type TerminalOutput } from "./terminal-output";
import { probePausedSockets } from "./terminal-liveness";

export interface TerminalBridgeDeps {
  pty: { open(sessionId: string, size: { cols: number; rows: number }): PtyChannel };
  /**
   * True when the person behind this upgrade may use the session's terminals; "view": may watch
   * them only (a passive viewer: its input is ignored and it never holds the output back).
   */
  authorize(req: IncomingMessage, sessionId: string): Promise<boolean | "view">;
  /** How long a terminal runs with no page attached (QUIVER_TERMINAL_IDLE_MINUTES; default 60 min). */
  idleMs?: number;
  /** Characters of output kept for replay per terminal (default 256 K). */
  scrollbackChars?: number;
  /** Running terminals per session (default 16): each is a shell on the runner. */
  maxPerSession?: number;
  /** Output characters a passive viewer may have waiting to be sent before it is closed (default 1 Mi). */
  viewerLagChars?: number;
  /** How long a page may take none of the output waiting for it before it is closed (default 30 s). */
  stallMs?: number;
  /** How often a socket not being read is pinged to learn whether its page left (default 5 s). */
  pausedProbeMs?: number;
  log?(line: string): void;
}

export interface TerminalBridge {
  readonly path: string;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Live PTYs, for tests and diagnostics. */
  size(): number;
  /** The session's terminals as list sockets see them. */
  list(sessionId: string): TerminalInfo[];
  /** Each attached page's socket: bytes it has not sent yet, output characters it is behind (tests, diagnostics). */
  pages(): Array<{ term: string; passive: boolean; bufferedAmount: number; behind: number }>;
  dispose(): void;
}

interface Entry {
  key: string;
  sessionId: string;
  term: string;
  createdAt: number;
  channel: PtyChannel;
  output: TerminalOutput;
  sockets: Map<WebSocket, Peer>;
  idle?: NodeJS.Timeout;
  unlisten: Array<() => void>;
  /** The PTY's input window is full: its sockets are paused until it drains. */
  paused: boolean;
}

interface Peer extends OutputPage {
  /** Named in `interrupt` on the list socket (attached's `socket`). */
  id: string;
  /** Frames read from this socket: an interrupt names how many came before it. */
  frames: number;
  /** Frames up to this one were typed before an interrupt that skipped them (or are the key): dropped. */
  discardTo: number;
  /** While the runner is asked what an interrupt means: input read meanwhile (numbered), not typed yet. */
  held?: Array<[number, string]>;
}

type Ended = TerminalInfo & { sessionId: string; ended: TerminalEnd; endedAt: number };

/** Ended terminals remembered per session (their tabs say how they ended). */
const ENDED_KEPT = 16;

type TermQuery = Extract<TerminalQuery, { term: string }>;

export function createTerminalBridge(deps: TerminalBridgeDeps): TerminalBridge {
  const idleMs = deps.idleMs ?? 60 * 60_000;
  const maxPerSession = deps.maxPerSession ?? 16;
  const log = deps.log ?? (() => {});
  const wss = new WebSocketServer({ noServer: true, maxPayload: 2 * 1024 * 1024 });
  const entries = new Map<string, Entry>();
  const ended = new Map<string, Ended>();
  const listeners = new Map<string, Set<WebSocket>>();
  const idleMinutes = Math.round((idleMs / 60_000) * 100) / 100;
  const stopProbing = probePausedSockets(
    () => [...entries.values()].flatMap((e) => [...e.sockets.keys()]),
    deps.pausedProbeMs ?? 5_000,
  );

  const send = (ws: WebSocket | undefined, msg: TerminalServerMessage) => {
    if (ws && ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
  };
  const keyOf = (sessionId: string, term: string) => `${sessionId}\u0000${term}`;

  function list(sessionId: string): TerminalInfo[] {
    const live = [...entries.values()]
      .filter((e) => e.sessionId === sessionId)
      .map((e) => ({ term: e.term, createdAt: e.createdAt }));
    // A terminal a person closed has no tab any more; the others show how they ended.
    const gone = [...ended.values()]
      .filter((e) => e.sessionId === sessionId && e.ended.kind !== "closed")
      .map(({ term, createdAt, ended: why, endedAt }) => ({ term, createdAt, ended: why, endedAt }));
    return [...live, ...gone].sort((a, b) => a.createdAt - b.createdAt);
  }

  function announce(sessionId: string): void {
    const socks = listeners.get(sessionId);
    if (!socks?.size) return;
    const msg: TerminalServerMessage = { type: "terminals", terminals: list(sessionId), idleMinutes };
    for (const ws of socks) send(ws, msg);
  }

  function remember(entry: Entry, why: TerminalEnd): void {
    ended.set(entry.key, {
      sessionId: entry.sessionId,
      term: entry.term,
      createdAt: entry.createdAt,
      ended: why,
      endedAt: Date.now(),
    });
    const mine = [...ended.entries()].filter(([, e]) => e.sessionId === entry.sessionId);
    for (const [key] of mine.slice(0, Math.max(0, mine.length - ENDED_KEPT))) ended.delete(key);
  }

  /** The terminal is over: its pages are told why, and the session's lists change. */
  function finish(entry: Entry, why: TerminalEnd): void {
    if (entries.get(entry.key) !== entry) return;
    entries.delete(entry.key);
    clearTimeout(entry.idle);
    entry.output.dispose();
    for (const off of entry.unlisten) off();
    remember(entry, why);
    for (const ws of entry.sockets.keys()) {
      send(ws, { type: "ended", reason: why });
      ws.close(1000, "terminal ended");
    }
    // A paused socket would not read the close handshake's answer.
    for (const ws of entry.sockets.keys()) ws.resume();
    entry.sockets.clear();
    announce(entry.sessionId);
  }

  /** We end it (idle limit, a person's close): the reason is ours, not the exit the PTY reports. */
  function stop(entry: Entry, why: TerminalEnd): void {
    entry.channel.close();
    finish(entry, why);
  }

  const exitReason = (exit: PtyExit): TerminalEnd =>
    exit.runnerLost !== undefined
      ? { kind: "runner", message: exit.runnerLost }
      : exit.reclaimedAfterMs !== undefined
        ? { kind: "reclaimed", minutes: Math.round(exit.reclaimedAfterMs / 600) / 100 }
        : { kind: "exited", exitCode: exit.exitCode, ...(exit.signal ? { signal: exit.signal } : {}) };

  function open(q: TermQuery): Entry {
    const channel = deps.pty.open(q.session, { cols: q.cols ?? 80, rows: q.rows ?? 24 });
    const key = keyOf(q.session, q.term);
    const sockets = new Map<WebSocket, Peer>();
    const output = createTerminalOutput({
      channel,
      pages: sockets,
      scrollbackChars: deps.scrollbackChars ?? 256 * 1024,
      viewerLagChars: deps.viewerLagChars ?? 1024 * 1024,
      stallMs: deps.stallMs ?? 30_000,
      live: () => entries.get(key) === entry,
      detach: (ws) => detach(entry, ws),
      log,
    });
    const entry: Entry = {
      key,
      sessionId: q.session,
      term: q.term,
      createdAt: Date.now(),
      channel,
      output,
      sockets,
      unlisten: [],
      paused: false,
    };
    entry.unlisten.push(
      channel.onData((data) => output.push(data)),
      channel.onExit((exit) => finish(entry, exitReason(exit))),
      channel.onDrain(() => {
        entry.paused = false;
        for (const [ws, peer] of entry.sockets) if (!peer.held) ws.resume();
      }),
    );
    entries.set(entry.key, entry);
    ended.delete(entry.key);
    announce(q.session);
    return entry;
  }

  function detach(entry: Entry, ws: WebSocket): void {
    if (!entry.sockets.delete(ws)) return;
    entry.output.advance();
    if (entry.sockets.size > 0 || entries.get(entry.key) !== entry) return;
    entry.channel.watched?.(false);
    clearTimeout(entry.idle);
    entry.idle = setTimeout(() => {
      log(`terminal ${entry.channel.id}: no page attached for ${idleMinutes} min (the idle limit), closing its PTY`);
      stop(entry, { kind: "idle", minutes: idleMinutes });
    }, idleMs);
  }

  function attach(ws: WebSocket, q: TermQuery, passive: boolean): void {
    const key = keyOf(q.session, q.term);
    let entry = entries.get(key);
    const gone = ended.get(key);
    if (!entry && gone && !q.restart) {
      send(ws, { type: "ended", reason: gone.ended });
      ws.close(1000, "terminal ended");
      return;
    }
    if (entry) {
      clearTimeout(entry.idle);
      entry.idle = undefined;
      // A page that could not measure its view (a hidden tab) leaves the shell's size as it is.
      if (q.cols !== undefined && q.rows !== undefined && !passive) entry.channel.resize(q.cols, q.rows);
    } else if (passive) {
      send(ws, { type: "error", message: "this terminal is not running" });
      ws.close(1000, "terminal not running");
      return;
    } else {
      const running = [...entries.values()].filter((e) => e.sessionId === q.session).length;
      if (running >= maxPerSession) {
        send(ws, {
          type: "error",
          message: `this session already has ${running} terminals running (at most ${maxPerSession}); close one first`,
        });
        ws.close(4004, "too many terminals");
        return;
      }
      try {
        entry = open(q);
      } catch (err) {
        send(ws, { type: "error", message: (err as Error).message });
        ws.close(4003, "no runner");
        return;
      }
    }
    const current = entry;
    const peer: Peer = {
      id: randomUUID(),
      passive,
      frames: 0,
      discardTo: 0,
      done: current.output.total,
      moved: Date.now(),
    };
    current.sockets.set(ws, peer);
    if (current.sockets.size === 1) current.channel.watched?.(true);
    if (current.paused && !passive) ws.pause();
    const { from, reset, data } = current.output.replay(q.offset);
    send(ws, { type: "attached", ptyId: current.channel.id, offset: from, reset, socket: peer.id });
    if (data) send(ws, { type: "data", data });

    ws.on("message", (raw) => {
      const n = ++peer.frames; // every frame, as the page counts what it sends
      const decoded = decodeFrame(TerminalClientMessage, raw);
      if (!decoded.ok) return send(ws, { type: "error", message: decoded.error });
      const msg = decoded.message;
      if (!current.sockets.has(ws) || passive) return;
      if (msg.type === "input") {
        if (peer.held) peer.held.push([n, msg.data]);
        else if (n > peer.discardTo) type(current, msg.data);
      } else if (msg.type === "resize") current.channel.resize(msg.cols, msg.rows);
      else if (msg.type === "close") stop(current, { kind: "closed" });
    });
    ws.on("close", () => detach(current, ws));
  }

  function type(entry: Entry, data: string): void {
    // Frames already read when the window filled are still sent: pause() stops the reading,
    // so the overshoot is at most what was buffered, each frame at most maxPayload.
    if (!entry.channel.write(data) && !entry.paused) {
      entry.paused = true;
      for (const [s, peer] of entry.sockets) if (!peer.passive) s.pause();
    }
  }

  /**
   * An interrupt key said on the list socket besides its own socket, where it is frame
   * `after + 1`. Once that frame is here it was typed in order, and this is moot. Until then it
   * may wait behind input the program does not read: the runner is asked whether the key skips
   * that input (ISIG: it does, and the frames up to the key's own are dropped as they come) or
   * not (a raw-mode program: the key's frame is typed in order). The socket is not read meanwhile.
   */
  function interrupt(sessionId: string, msg: Extract<TerminalClientMessage, { type: "interrupt" }>): void {
    const entry = entries.get(keyOf(sessionId, msg.term));
    const found = entry && [...entry.sockets].find(([, p]) => p.id === msg.socket);
    if (!entry || !found || found[1].passive || found[1].frames > msg.after || found[1].held) return;
    const [ws, peer] = found;
    const asked = entry.channel.interrupt?.(msg.key, (skipped) => {
      const held = peer.held ?? [];
      peer.held = undefined;
      if (skipped) peer.discardTo = Math.max(peer.discardTo, msg.after + 1);
      for (const [n, data] of held) if (n > peer.discardTo && entries.get(entry.key) === entry) type(entry, data);
      if (!entry.paused) ws.resume();
    });
    if (!asked) return;
    peer.held = [];
    ws.pause();
  }

  function watch(ws: WebSocket, sessionId: string): void {
    const socks = listeners.get(sessionId) ?? new Set<WebSocket>();
    listeners.set(sessionId, socks);
    socks.add(ws);
    send(ws, { type: "terminals", terminals: list(sessionId), idleMinutes });
    // A tab closed on an ended terminal forgets it for every page; a running one is closed here
    // too, as its own socket may be paused behind input the program does not read.
    ws.on("message", (raw) => {
      const decoded = decodeFrame(TerminalClientMessage, raw);
      if (!decoded.ok) return;
      const msg = decoded.message;
      if (msg.type === "close" && msg.term) {
        const entry = entries.get(keyOf(sessionId, msg.term));
        if (entry) stop(entry, { kind: "closed" });
      } else if (msg.type === "interrupt") interrupt(sessionId, msg);
      else if (msg.type === "forget" && ended.delete(keyOf(sessionId, msg.term))) announce(sessionId);
    });
    ws.on("close", () => {
      socks.delete(ws);
      if (socks.size === 0) listeners.delete(sessionId);
    });
  }

  return {
    path: TERMINAL_PATH,
    handleUpgrade(req, socket, head) {
      const url = new URL(req.url ?? "/", "http://localhost");
      const parsed = TerminalQuery.safeParse(Object.fromEntries(url.searchParams));
      if (!parsed.success) {
        socket.end(
          `HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n${parsed.error.issues[0]?.message ?? "bad query"}\n`,
        );
        return;
      }
      const q = parsed.data;
      deps.authorize(req, q.session).then(
        (ok) => {
          if (!ok) return void socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\nno such session\n");
          wss.handleUpgrade(req, socket, head, (ws) =>
            "term" in q ? attach(ws, q, ok === "view") : watch(ws, q.session),
          );
        },
        () => socket.destroy(),
      );
    },
    size: () => entries.size,
    list,
    pages: () =>
      [...entries.values()].flatMap((e) =>
        [...e.sockets].map(([ws, peer]) => ({
          term: e.term,
          passive: peer.passive,
          bufferedAmount: ws.bufferedAmount,
          behind: e.output.total - peer.done,
        })),
      ),
    dispose() {
      stopProbing();
      for (const entry of [...entries.values()]) {
        entry.channel.close();
        for (const ws of entry.sockets.keys()) ws.terminate();
        clearTimeout(entry.idle);
        entry.output.dispose();
        for (const off of entry.unlisten) off();
      }
      entries.clear();
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}
