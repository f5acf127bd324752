// Server side of the person's terminals: a PtyChannel per open PTY on the session's runner,
// data both ways, resize, close, and an exit when the PTY ends or its runner goes away. Input is
// windowed: bytes sent count until the runner's pty.ack says they reached the PTY; write() says
// false at PTY_INPUT_WINDOW and onDrain fires at half of it, so the terminal socket stops
// reading meanwhile and a paste into a program that does not read waits in TCP, not here.
// Output is windowed the other way: the consumer says what it has passed on (drained()), and
// the runner, acknowledged in batches (pty.drained), stops reading the PTY past its window.
import { randomUUID } from "node:crypto";
import {
  PTY_INPUT_FRAME_CHARS,
  PTY_INPUT_WINDOW,
  PTY_OUTPUT_ACK_CHARS,
  PTY_OUTPUT_WINDOW,
  type RunnerToServer,
} from "../../protocol/runner";
import { ExecutorUnavailableError } from "../contract";
import type { RunnerConnection } from "./connection";

export interface PtyExit {
  exitCode: number | null;
  signal?: string;
  /** Set when the PTY ended because its runner went away (why), not by itself. */
  runnerLost?: string;
  /** Set when the runner closed it to make room for another, after this long unwatched. */
  reclaimedAfterMs?: number;
}

export interface PtyChannel {
  readonly id: string;
  readonly sessionId: string;
  /** Sends input; false once PTY_INPUT_WINDOW bytes are unacknowledged (stop reading; onDrain says when to go on). */
  write(data: string): boolean;
  /** Input bytes sent to the runner, not yet written to the PTY. */
  readonly unacked: number;
  onDrain(listener: () => void): () => void;
  resize(cols: number, rows: number): void;
  /** Asks the runner to close the PTY; onExit fires when it has. */
  close(): void;
  /** Output as it comes; the consumer calls drained() with its length once it is passed on. */
  onData(listener: (data: string) => void): () => void;
  /** `chars` more of the output were passed on (to every page that must keep up, or to none). */
  drained?(chars: number): void;
  /**
   * An interrupt key typed after input still on its way: the runner lets it skip the queue when
   * the terminal signals on it (`verdict(true)`), else the caller types it in order. False: this
   * runner cannot (older), type it in order.
   */
  interrupt?(key: "\u0003" | "\u001c" | "\u001a", verdict: (skipped: boolean) => void): boolean;
  /** Whether any page shows it: a full runner closes the terminal unwatched longest to open another. */
  watched?(watched: boolean): void;
  onExit(listener: (exit: PtyExit) => void): () => void;
}

interface Entry {
  channel: PtyChannel;
  conn: RunnerConnection;
  data: Set<(data: string) => void>;
  exit: Set<(exit: PtyExit) => void>;
  drain: Set<() => void>;
  unacked: number;
  /** write() said false: onDrain fires once below half the window. */
  full: boolean;
  /** Output characters the runner counts (counted pty.data) not yet said to be drained. */
  owed: number;
  /** Drained characters not yet acknowledged to the runner (sent in batches). */
  batch: number;
  /** The runner counts output (so it also answers pty.interrupt). */
  counting: boolean;
  /** Answers awaited to pty.interrupt, in order. */
  verdicts: Array<(skipped: boolean) => void>;
}

/** Splits input into frames of at most PTY_INPUT_FRAME_CHARS, never between a surrogate pair. */
function frames(data: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < data.length;) {
    let end = Math.min(data.length, at + PTY_INPUT_FRAME_CHARS);
    const last = data.charCodeAt(end - 1);
    if (end < data.length && last >= 0xd800 && last <= 0xdbff) end--;
    out.push(data.slice(at, end));
    at = end;
  }
  return out;
}

export class PtyBridge {
  private readonly ptys = new Map<string, Entry>();
  /** Words for a session without a connected runner (which runner, since when). */
  whyUnavailable?: (sessionId: string) => string | undefined;

  constructor(
    private readonly connectionFor: (sessionId: string) => RunnerConnection | undefined,
    /** The session's workspace on that runner (absent: its default folder). */
    private readonly workspaceOf: (sessionId: string) => string | undefined = () => undefined,
  ) {}

  /** Opens a PTY in the session's workspace on its runner. */
  open(sessionId: string, size: { cols: number; rows: number }): PtyChannel {
    const conn = this.connectionFor(sessionId);
    if (!conn)
      throw new ExecutorUnavailableError(
        `${this.whyUnavailable?.(sessionId) ?? "no runner is connected for this session"}; the terminal cannot open`,
      );
    const id = `pty_${randomUUID()}`;
    // A runner that does not acknowledge input (older than pty.ack) is not windowed, as before.
    const windowed = conn.hello.ptyAck === true;
    const entry: Entry = {
      conn,
      data: new Set(),
      exit: new Set(),
      drain: new Set(),
      unacked: 0,
      full: false,
      owed: 0,
      batch: 0,
      counting: false,
      verdicts: [],
      channel: {
        id,
        sessionId,
        write: (data) => {
          if (!this.ptys.has(id)) return true;
          for (const piece of frames(data))
            if (conn.send({ type: "pty.input", ptyId: id, data: piece }) && windowed)
              entry.unacked += Buffer.byteLength(piece, "utf8");
          if (entry.unacked >= PTY_INPUT_WINDOW) entry.full = true;
          return !entry.full;
        },
        get unacked() {
          return entry.unacked;
        },
        onDrain: (l) => (entry.drain.add(l), () => entry.drain.delete(l)),
        resize: (cols, rows) => void (this.ptys.has(id) && conn.send({ type: "pty.resize", ptyId: id, cols, rows })),
        close: () => void (this.ptys.has(id) && conn.send({ type: "pty.close", ptyId: id })),
        onData: (l) => (entry.data.add(l), () => entry.data.delete(l)),
        drained: (chars) => this.drained(entry, chars),
        interrupt: (key, verdict) => {
          if (!this.ptys.has(id) || !entry.counting || !conn.send({ type: "pty.interrupt", ptyId: id, key }))
            return false;
          entry.verdicts.push(verdict);
          if (windowed) entry.unacked += 1;
          return true;
        },
        watched: (watched) =>
          void (this.ptys.has(id) && conn.hello.ptyReclaim && conn.send({ type: "pty.watched", ptyId: id, watched })),
        onExit: (l) => (entry.exit.add(l), () => entry.exit.delete(l)),
      },
    };
    this.ptys.set(id, entry);
    const workspaceId = this.workspaceOf(sessionId);
    if (
      !conn.send({
        type: "pty.open",
        ptyId: id,
        sessionId,
        ...(workspaceId ? { workspaceId } : {}),
        cols: size.cols,
        rows: size.rows,
        outputWindow: PTY_OUTPUT_WINDOW,
      })
    ) {
      this.ptys.delete(id);
      throw new ExecutorUnavailableError("the runner disconnected; the terminal cannot open");
    }
    return entry.channel;
  }

  fromRunner(
    conn: RunnerConnection,
    msg: Extract<RunnerToServer, { type: "pty.data" | "pty.ack" | "pty.interrupted" | "pty.exit" }>,
  ): void {
    const entry = this.ptys.get(msg.ptyId);
    if (!entry || entry.conn !== conn) return;
    if (msg.type === "pty.data") {
      if (msg.counted) entry.owed += msg.data.length;
      if (msg.counted) entry.counting = true;
      for (const l of entry.data) l(msg.data);
    } else if (msg.type === "pty.ack") this.acked(entry, msg.bytes);
    else if (msg.type === "pty.interrupted") entry.verdicts.shift()?.(msg.skipped);
    else
      this.finish(msg.ptyId, {
        exitCode: msg.exitCode,
        ...(msg.signal ? { signal: msg.signal } : {}),
        ...(msg.reclaimedAfterMs !== undefined ? { reclaimedAfterMs: msg.reclaimedAfterMs } : {}),
      });
  }

  runnerGone(conn: RunnerConnection, reason: string): void {
    for (const [id, entry] of this.ptys)
      if (entry.conn === conn)
        this.finish(id, { exitCode: null, signal: `runner disconnected: ${reason}`, runnerLost: reason });
  }

  closeSession(sessionId: string): void {
    for (const entry of [...this.ptys.values()]) if (entry.channel.sessionId === sessionId) entry.channel.close();
  }

  /** PTYs of this server; the runner closes its side when the connection drops. */
  list(): Array<{ id: string; sessionId: string; runnerId: string }> {
    return [...this.ptys.values()].map((e) => ({
      id: e.channel.id,
      sessionId: e.channel.sessionId,
      runnerId: e.conn.id,
    }));
  }

  dispose(): void {
    for (const [id, entry] of [...this.ptys]) {
      entry.conn.send({ type: "pty.close", ptyId: id });
      this.finish(id, { exitCode: null, signal: "server shutting down" });
    }
  }

  private acked(entry: Entry, bytes: number): void {
    // A runner acknowledging more than was sent cannot open the window wider than it is.
    entry.unacked = Math.max(0, entry.unacked - bytes);
    if (!entry.full || entry.unacked > PTY_INPUT_WINDOW / 2) return;
    entry.full = false;
    for (const l of [...entry.drain]) {
      try {
        l();
      } catch {
        // one listener's failure must not keep the others paused
      }
    }
  }

  private drained(entry: Entry, chars: number): void {
    // Only what the runner counted is acknowledged (an older runner counts nothing).
    const n = Math.min(chars, entry.owed);
    if (n <= 0 || !this.ptys.has(entry.channel.id)) return;
    entry.owed -= n;
    entry.batch += n;
    if (entry.batch < PTY_OUTPUT_ACK_CHARS) return;
    entry.conn.send({ type: "pty.drained", ptyId: entry.channel.id, chars: entry.batch });
    entry.batch = 0;
  }

  private finish(id: string, exit: PtyExit): void {
    const entry = this.ptys.get(id);
    if (!entry) return;
    this.ptys.delete(id);
    for (const l of entry.exit) {
      try {
        l(exit);
      } catch {
        // one listener's failure must not keep the others from learning the PTY ended
      }
    }
  }
}
