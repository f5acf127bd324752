// One authenticated runner connection on the server side: hello, request/result correlation
// with deadlines and cancel, progress streaming, liveness pings, and failing every request in
// flight the moment the socket goes away.
import { randomUUID } from "node:crypto";
import type WebSocket from "ws";
import { decodeFrame, RunnerToServer, type RunnerHello, type ServerToRunner } from "../../protocol/runner";
import { ExecutorUnavailableError, type ExecRequest, type ExecResult } from "../contract";
import { progressGuard, type ProgressGuard } from "./progress-guard";

/** How long after its deadline a request waits for the runner's own answer before failing. */
const DEADLINE_GRACE_MS = 2_000;

interface Pending {
  op: string;
  resolve(r: ExecResult): void;
  reject(e: Error): void;
  progress?: ProgressGuard;
  output?: ExecRequest["output"];
  /** Output frames are stored in order; the result waits for the last of them. */
  stored: Promise<void>;
  outputError?: Error;
  cleanup(): void;
}

export interface ConnectionEvents {
  onFrame(conn: RunnerConnection, msg: RunnerToServer): void;
  onClose(conn: RunnerConnection, reason: string): void;
  log(line: string): void;
}

export class RunnerConnection {
  private readonly pending = new Map<string, Pending>();
  private pingTimer?: NodeJS.Timeout;
  private lastHeard = Date.now();
  private closed = false;
  readonly connectedAt = new Date();

  constructor(
    readonly ws: WebSocket,
    readonly hello: RunnerHello,
    private readonly events: ConnectionEvents,
    pingIntervalMs: number,
  ) {
    ws.on("message", (data) => {
      this.lastHeard = Date.now();
      const decoded = decodeFrame(RunnerToServer, data);
      if (!decoded.ok) return events.log(`runner ${hello.runnerId}: ignored frame (${decoded.error})`);
      this.frame(decoded.message);
    });
    ws.on("close", (code, reason) =>
      this.shutdown(`connection closed (${code}${reason.length ? ` ${reason.toString()}` : ""})`),
    );
    ws.on("error", (err) => events.log(`runner ${hello.runnerId}: socket error ${err.message}`));
    // Two missed intervals without any frame (pongs included) means the peer is gone.
    this.pingTimer = setInterval(() => {
      if (Date.now() - this.lastHeard > pingIntervalMs * 2.5) {
        events.log(`runner ${hello.runnerId}: no answer to pings; dropping it`);
        ws.terminate();
        this.shutdown("runner stopped answering pings");
        return;
      }
      this.send({ type: "ping", id: randomUUID() });
    }, pingIntervalMs);
  }

  get id(): string {
    return this.hello.runnerId;
  }

  get open(): boolean {
    return !this.closed;
  }

  get inflight(): number {
    return this.pending.size;
  }

  send(msg: ServerToRunner): boolean {
    if (this.closed || this.ws.readyState !== this.ws.OPEN) return false;
    this.ws.send(JSON.stringify(msg));
    return true;
  }

  /** Runs `req` in `workspaceId` (absent: the runner's default folder). */
  run(req: ExecRequest, workspaceId?: string): Promise<ExecResult> {
    if (this.closed) return Promise.reject(new ExecutorUnavailableError(`runner ${this.id} is not connected`));
    if (req.signal.aborted) return Promise.resolve(cancelled(req.op));
    if (req.deadline <= Date.now())
      return Promise.reject(new ExecutorUnavailableError(`${req.op}: deadline passed before it was sent`));
    const id = randomUUID();
    return new Promise<ExecResult>((resolve, reject) => {
      const onAbort = () => {
        this.send({ type: "cancel", id });
        settle(() => resolve(cancelled(req.op)));
      };
      const deadlineTimer = setTimeout(
        () => {
          this.send({ type: "cancel", id });
          settle(() =>
            reject(
              new ExecutorUnavailableError(
                `${req.op} passed its deadline without an answer from runner ${this.id}`,
                true,
              ),
            ),
          );
        },
        req.deadline - Date.now() + DEADLINE_GRACE_MS,
      );
      const listener = req.onProgress;
      // Handed over from a timer as well as from a frame: a listener's throw must not escape.
      const progress =
        listener &&
        progressGuard((chunk) => {
          try {
            listener(chunk);
          } catch (err) {
            this.events.log(`progress listener failed: ${(err as Error).message}`);
          }
        });
      const cleanup = () => {
        progress?.dispose();
        clearTimeout(deadlineTimer);
        req.signal.removeEventListener("abort", onAbort);
        this.pending.delete(id);
      };
      const settle = (fn: () => void) => {
        if (!this.pending.has(id)) return;
        cleanup();
        fn();
      };
      this.pending.set(id, {
        op: req.op,
        resolve: (r) => settle(() => resolve(r)),
        reject: (e) => settle(() => reject(e)),
        progress,
        output: req.output,
        stored: Promise.resolve(),
        cleanup,
      });
      req.signal.addEventListener("abort", onAbort, { once: true });
      const ceiling = req.output ? { outputCeiling: req.output.ceiling } : {};
      const sent = this.send({
        type: "request",
        id,
        sessionId: req.sessionId,
        ...(workspaceId ? { workspaceId } : {}),
        op: req.op,
        input: req.input,
        deadline: req.deadline,
        ...ceiling,
      });
      if (!sent)
        settle(() => reject(new ExecutorUnavailableError(`runner ${this.id} disconnected before ${req.op} was sent`)));
    });
  }

  private frame(msg: RunnerToServer): void {
    switch (msg.type) {
      case "result": {
        const p = this.pending.get(msg.id);
        if (!p) return;
        const result = { ok: msg.ok, output: msg.output, ...(msg.meta ? { meta: msg.meta } : {}) };
        void p.stored.then(() => (p.outputError ? p.reject(p.outputError) : p.resolve(result)));
        return;
      }
      case "output": {
        const p = this.pending.get(msg.id);
        if (!p) return;
        const bytes = Buffer.from(msg.data, "base64");
        const end = msg.offset + bytes.length;
        // Stored one frame after another; the ack lets the runner send more (output-window.ts).
        p.stored = p.stored.then(async () => {
          if (p.output && !p.outputError) await p.output.sink(bytes).catch((e: Error) => void (p.outputError = e));
          this.send({ type: "output.ack", id: msg.id, offset: end });
        });
        return;
      }
      case "progress":
        this.pending.get(msg.id)?.progress?.write(msg.chunk);
        return;
      case "pong":
        return;
      case "hello":
        this.events.log(`runner ${this.id}: ignored a second hello`);
        return;
      default:
        this.events.onFrame(this, msg);
    }
  }

  /** Fails everything in flight; idempotent. */
  shutdown(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.pingTimer);
    for (const p of [...this.pending.values()]) {
      p.reject(
        new ExecutorUnavailableError(
          `runner ${this.id} disconnected while ${p.op} was running (${reason}); its outcome is unknown.`,
          true,
        ),
      );
    }
    this.pending.clear();
    this.events.onClose(this, reason);
  }

  close(code: number, reason: string): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(code, reason);
    else this.ws.terminate();
    this.shutdown(reason);
  }
}

function cancelled(op: string): ExecResult {
  return { ok: false, output: `${op} was cancelled`, meta: { cancelled: true } };
}
