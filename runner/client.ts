// The runner's connection to the server: authenticate on the upgrade, say hello, serve requests
// concurrently (each with its own abort signal: cancel, deadline, disconnect), route each
// request, PTY and preview frame to the workspace it names (runner/root/workspaces.ts), forward
// change events, and reconnect with exponential backoff and jitter.
import WebSocket from "ws";
import {
  decodeFrame,
  RUNNER_PROTOCOL_VERSION,
  runnerAuthHeaderValue,
  runnerProofMessage,
  ServerToRunner,
  type RunnerSandbox,
  type RunnerToServer,
} from "../server/protocol/runner";
import type { PreviewServerFrame } from "../server/protocol/preview";
import type { RunnerKey } from "./identity-key";
import type { AnyOp, PtyHandler } from "./ops";
import { OutputWindow } from "./output-window";
import type { PreviewHandler } from "./preview";
import type { Served } from "./served";
import type { Workspaces } from "./root/workspaces";

export interface RunnerClientOptions {
  url: string;
  token: string;
  runnerId: string;
  version: string;
  /** Where frames act: the one folder, or a `--root` runner's workspaces by id. */
  workspaces: Workspaces;
  /** Hello's `workspace`: the default workspace's folder, or the root. */
  workspacePath: string;
  sandbox: RunnerSandbox;
  /** Its own key (identity-key.ts): the hello names it and the server's challenge is signed with it. */
  key?: Pick<RunnerKey, "publicKey" | "sign">;
  log(line: string): void;
  /** The server refused the token: retrying cannot help. */
  onAuthRefused(status: number): void;
  backoff?: { baseMs: number; maxMs: number };
  /** Silence from the server for this long means it is gone (it pings every few seconds). */
  idleTimeoutMs?: number;
}

/** Close codes by which the server refuses this runner's hello: retrying soon cannot help. */
const REFUSED: Record<number, string> = {
  4002: "the server did not accept this runner's hello",
  4003: "the server speaks another runner protocol version",
  4005: "its runner id is bound to another token, or its token to another runner id, or the id to another runner's key: start it with the --id its token is bound to, or another --id, or upgrade it, or have the id released (npm run runner:release -- <id>)",
};

export class RunnerClient {
  private ws?: WebSocket;
  private attempt = 0;
  /** Hellos refused in a row: the backoff keeps growing across them (each one opened first). */
  private refusals = 0;
  private retryTimer?: NodeJS.Timeout;
  private idleTimer?: NodeJS.Timeout;
  private lastHeard = 0;
  private stopped = false;
  private readonly inflight = new Map<string, AbortController>();
  private readonly windows = new Map<string, OutputWindow>();
  /**
   * Which workspace's handler each terminal and preview stream belongs to (later frames name
   * only their id). Promises, so frames that arrive while the workspace is being opened are
   * handed on in order once it is.
   */
  private readonly ptys = new Map<string, Promise<PtyHandler | undefined>>();
  private readonly streams = new Map<string, Promise<PreviewHandler | undefined>>();

  constructor(private readonly o: RunnerClientOptions) {}

  /** A workspace's file changes, as files.changed (no workspaceId: the default workspace). */
  filesChanged(workspaceId: string | undefined, paths: string[], version: number): void {
    this.send({ type: "files.changed", ...(workspaceId ? { workspaceId } : {}), paths, version });
  }

  /** Frames a workspace's terminals and preview send: the routes of ended streams are dropped. */
  sendFromWorkspace(message: RunnerToServer): boolean {
    if (message.type === "pty.exit") this.ptys.delete(message.ptyId);
    else if (message.type === "preview.end" || message.type === "preview.ws.closed")
      this.streams.delete(message.streamId);
    return this.send(message);
  }

  get connected(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  start(): void {
    this.connect();
  }

  send(message: RunnerToServer): boolean {
    if (this.ws?.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(message));
    return true;
  }

  private connect(): void {
    if (this.stopped) return;
    const ws = new WebSocket(this.o.url, {
      headers: { authorization: runnerAuthHeaderValue(this.o.token) },
      handshakeTimeout: 10_000,
      maxPayload: 64 * 1024 * 1024,
    });
    this.ws = ws;
    ws.on("unexpected-response", (_req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      ws.terminate();
      if (status === 401 || status === 403) this.o.onAuthRefused(status);
      else this.o.log(`server answered the upgrade with HTTP ${status}`);
    });
    ws.on("open", () => {
      this.attempt = 0;
      this.lastHeard = Date.now();
      this.o.log(`connected to ${this.o.url}`);
      void this.hello(ws);
      this.watchIdle();
    });
    ws.on("message", (data) => {
      this.lastHeard = Date.now();
      const decoded = decodeFrame(ServerToRunner, data);
      if (!decoded.ok) return this.o.log(`ignored a frame from the server: ${decoded.error}`);
      // Any frame but the challenge means the hello was taken.
      if (decoded.message.type !== "challenge") this.refusals = 0;
      this.handle(decoded.message);
    });
    ws.on("error", (err) => {
      if (!this.stopped) this.o.log(`connection error: ${err.message}`);
    });
    ws.on("close", (code, reason) => {
      if (this.ws !== ws) return;
      const refused = REFUSED[code];
      if (refused) {
        // The socket opened (which reset the backoff) and was refused at once: without this, a
        // runner the server will never take would reconnect several times a second.
        this.attempt = Math.max(this.attempt, ++this.refusals);
        const why = reason.toString() || "no reason given";
        this.o.log(`the server refused runner ${JSON.stringify(this.o.runnerId)} (${code}: ${why}): ${refused}`);
      }
      this.ws = undefined;
      clearInterval(this.idleTimer);
      // Nobody is waiting for these results any more.
      for (const ctrl of this.inflight.values()) ctrl.abort(new Error("server connection lost"));
      this.inflight.clear();
      this.eachServed((s) => {
        s.pty?.connectionChanged(false);
        s.preview.connectionLost();
      });
      this.streams.clear();
      this.scheduleReconnect();
    });
  }

  private async hello(ws: WebSocket): Promise<void> {
    const served = await this.o.workspaces.default?.catch(() => undefined);
    let facts = {};
    try {
      facts = await this.o.workspaces.helloFacts();
    } catch (err) {
      this.o.log(`could not list the workspaces for hello: ${(err as Error).message}`);
    }
    if (this.ws !== ws) return;
    this.send({
      type: "hello",
      protocol: RUNNER_PROTOCOL_VERSION,
      runnerId: this.o.runnerId,
      workspace: served?.workspace.root ?? this.o.workspacePath,
      version: this.o.version,
      sandbox: this.o.sandbox,
      workspaceVersion: served?.workspace.version ?? 0,
      ptyAck: true,
      ptyReclaim: true,
      ...(this.o.key ? { publicKey: this.o.key.publicKey } : {}),
      ...facts,
    });
    this.eachServed((s) => s.pty?.connectionChanged(true));
  }

  private eachServed(fn: (s: Served) => void): void {
    void this.o.workspaces.all().then((list) => list.forEach(fn));
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    const { baseMs, maxMs } = this.o.backoff ?? { baseMs: 250, maxMs: 15_000 };
    const cap = Math.min(maxMs, baseMs * 2 ** this.attempt++);
    // Full jitter: many runners restarting with one server do not reconnect in lockstep.
    const delay = Math.round(cap / 2 + Math.random() * (cap / 2));
    this.o.log(`disconnected; reconnecting in ${delay} ms`);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  private watchIdle(): void {
    const limit = this.o.idleTimeoutMs ?? 45_000;
    clearInterval(this.idleTimer);
    this.idleTimer = setInterval(
      () => {
        if (Date.now() - this.lastHeard > limit) {
          this.o.log(`no word from the server for ${limit} ms; reconnecting`);
          this.ws?.terminate();
        }
      },
      Math.min(5_000, limit / 3),
    );
  }

  private handle(msg: ServerToRunner): void {
    switch (msg.type) {
      case "ping":
        this.send({ type: "pong", id: msg.id });
        return;
      case "request":
        void this.serve(msg);
        return;
      case "cancel":
        this.inflight.get(msg.id)?.abort(new Error("cancelled"));
        return;
      case "challenge":
        if (this.o.key)
          this.send({
            type: "proof",
            signature: this.o.key.sign(runnerProofMessage(msg.nonce, this.o.runnerId, this.o.key.publicKey)),
          });
        return;
      case "output.ack":
        this.windows.get(msg.id)?.ack(msg.offset);
        return;
      case "preview.request":
      case "preview.ws.open":
        this.openStream(msg);
        return;
      case "preview.body":
      case "preview.ack":
      case "preview.cancel":
      case "preview.ws.send":
      case "preview.ws.close":
        void this.streams.get(msg.streamId)?.then((h) => h && this.safely(msg.type, () => h.handle(msg)));
        return;
      case "pty.open":
        this.openPty(msg);
        return;
      default: {
        const route = this.ptys.get(msg.ptyId);
        if (route) void route.then((h) => h && this.safely(msg.type, () => h.handle(msg)));
        else if (msg.type === "pty.close")
          this.send({ type: "pty.exit", ptyId: msg.ptyId, exitCode: null, signal: "not open" });
      }
    }
  }

  /** A terminal's or preview's frame handler that throws is a bug to log, never the runner's end
   *  (a rejection nobody handles ends the process, and every terminal and command with it). */
  private safely(frame: string, handle: () => void): void {
    try {
      handle();
    } catch (err) {
      this.o.log(`a ${frame} frame failed: ${(err as Error).message}`);
    }
  }

  private openPty(msg: Extract<ServerToRunner, { type: "pty.open" }>): void {
    const exit = (signal: string) =>
      void this.sendFromWorkspace({ type: "pty.exit", ptyId: msg.ptyId, exitCode: null, signal });
    const held = this.ptys.get(msg.ptyId);
    const route = this.o.workspaces.get(msg.workspaceId).then(
      async (served) => {
        if (!served.pty) return void exit("unsupported");
        // A terminal id belongs to one workspace: re-attaching it from another is refused.
        if (held && (await held) !== served.pty) return void exit("terminal id in use by another workspace");
        this.safely(msg.type, () => served.pty!.handle(msg));
        return served.pty;
      },
      (err: Error) => void exit(err.message),
    );
    if (!held) this.ptys.set(msg.ptyId, route);
  }

  private openStream(msg: Extract<PreviewServerFrame, { type: "preview.request" | "preview.ws.open" }>): void {
    const route = this.o.workspaces.get(msg.workspaceId).then(
      (served) => {
        this.safely(msg.type, () => served.preview.handle(msg));
        return served.preview;
      },
      (err: Error) => {
        const error = { code: "refused" as const, message: err.message };
        if (msg.type === "preview.request") this.send({ type: "preview.end", streamId: msg.streamId, error });
        else this.send({ type: "preview.ws.closed", streamId: msg.streamId, error });
        this.streams.delete(msg.streamId);
        return undefined;
      },
    );
    this.streams.set(msg.streamId, route);
  }

  private async serve(msg: Extract<ServerToRunner, { type: "request" }>): Promise<void> {
    const reply = (ok: boolean, output: string, meta?: Record<string, unknown>) =>
      this.send({ type: "result", id: msg.id, ok, output, ...(meta ? { meta } : {}) });
    if (this.inflight.has(msg.id)) return void reply(false, `request id ${msg.id} is already in flight`);
    let served: Served | undefined;
    let op: AnyOp | undefined = this.o.workspaces.ops.get(msg.op);
    if (!op) {
      try {
        served = await this.o.workspaces.get(msg.workspaceId);
      } catch (err) {
        return void reply(false, (err as Error).message);
      }
      op = served.registry.get(msg.op);
      if (!op)
        return void reply(
          false,
          `unknown operation "${msg.op}"; this runner serves: ${[...this.o.workspaces.ops.names(), ...served.registry.names()].sort().join(", ")}`,
        );
    }
    const parsed = op.input.safeParse(msg.input);
    if (!parsed.success) {
      const issues = parsed.error.issues
        .map(
          (i: { path: PropertyKey[]; message: string }) => `${i.path.map(String).join(".") || "input"}: ${i.message}`,
        )
        .join("; ");
      return void reply(false, `invalid input for ${msg.op}: ${issues}`);
    }
    const remaining = msg.deadline - Date.now();
    if (remaining <= 0) return void reply(false, `deadline passed before ${msg.op} could start`);
    const ctrl = new AbortController();
    this.inflight.set(msg.id, ctrl);
    const timer = setTimeout(() => ctrl.abort(new Error("deadline exceeded")), remaining);
    const window = msg.outputCeiling ? new OutputWindow(msg.id, (f) => this.send(f), ctrl.signal) : undefined;
    if (window) this.windows.set(msg.id, window);
    try {
      const workspace = served?.workspace;
      const r = await op.run(parsed.data, {
        sessionId: msg.sessionId,
        // workspace.* ops act on the root, not in a workspace: they never read this.
        workspace: workspace as NonNullable<typeof workspace>,
        signal: ctrl.signal,
        deadline: msg.deadline,
        progress: (chunk) => void (ctrl.signal.aborted || this.send({ type: "progress", id: msg.id, chunk })),
        filesChanged: (paths) => workspace?.markChanged(paths),
        ...(window && msg.outputCeiling
          ? { output: { ceiling: msg.outputCeiling, write: (b: Buffer) => window.write(b) } }
          : {}),
      });
      reply(r.ok, r.output, r.meta);
    } catch (err) {
      const reason = ctrl.signal.aborted
        ? ((ctrl.signal.reason as Error)?.message ?? "aborted")
        : ((err as Error)?.message ?? String(err));
      reply(false, ctrl.signal.aborted ? `${msg.op} stopped: ${reason}` : reason);
    } finally {
      clearTimeout(timer);
      this.inflight.delete(msg.id);
      this.windows.delete(msg.id);
    }
  }

  /** Aborts in-flight work, closes the socket and stops reconnecting. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.idleTimer);
    this.eachServed((s) => s.preview.connectionLost());
    for (const ctrl of this.inflight.values()) ctrl.abort(new Error("runner shutting down"));
    this.inflight.clear();
    const ws = this.ws;
    this.ws = undefined;
    if (ws && ws.readyState === WebSocket.OPEN) ws.close(1001, "runner shutting down");
    else ws?.terminate();
  }
}
