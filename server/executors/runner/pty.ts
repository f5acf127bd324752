// Server side of the person's terminals: a PtyChannel per open PTY on the session's runner,
// data both ways, resize, close, and an exit when the PTY ends or its runner goes away.
import { randomUUID } from "node:crypto";
import type { RunnerToServer } from "../../protocol/runner";
import { ExecutorUnavailableError } from "../contract";
import type { RunnerConnection } from "./connection";

export interface PtyExit {
  exitCode: number | null;
  signal?: string;
  /** Set when the PTY ended because its runner went away (why), not by itself. */
  runnerLost?: string;
}

export interface PtyChannel {
  readonly id: string;
  readonly sessionId: string;
  write(data: string): void;
  resize(cols: number, rows: number): void;
  /** Asks the runner to close the PTY; onExit fires when it has. */
  close(): void;
  onData(listener: (data: string) => void): () => void;
  onExit(listener: (exit: PtyExit) => void): () => void;
}

interface Entry {
  channel: PtyChannel;
  conn: RunnerConnection;
  data: Set<(data: string) => void>;
  exit: Set<(exit: PtyExit) => void>;
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
    const entry: Entry = {
      conn,
      data: new Set(),
      exit: new Set(),
      channel: {
        id,
        sessionId,
        write: (data) => void (this.ptys.has(id) && conn.send({ type: "pty.input", ptyId: id, data })),
        resize: (cols, rows) => void (this.ptys.has(id) && conn.send({ type: "pty.resize", ptyId: id, cols, rows })),
        close: () => void (this.ptys.has(id) && conn.send({ type: "pty.close", ptyId: id })),
        onData: (l) => (entry.data.add(l), () => entry.data.delete(l)),
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
      })
    ) {
      this.ptys.delete(id);
      throw new ExecutorUnavailableError("the runner disconnected; the terminal cannot open");
    }
    return entry.channel;
  }

  fromRunner(conn: RunnerConnection, msg: Extract<RunnerToServer, { type: "pty.data" | "pty.exit" }>): void {
    const entry = this.ptys.get(msg.ptyId);
    if (!entry || entry.conn !== conn) return;
    if (msg.type === "pty.data") for (const l of entry.data) l(msg.data);
    else this.finish(msg.ptyId, { exitCode: msg.exitCode, ...(msg.signal ? { signal: msg.signal } : {}) });
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
