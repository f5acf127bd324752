// The runner executor: accepts authenticated runner connections on /runner, binds each session
// to one runner, runs tool operations there (see runner/connection.ts), relays workspace change
// events and bridges PTYs for the terminal. Executors never touch the database or the model.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { decodeFrame, RUNNER_PROTOCOL_VERSION, RunnerHello, type RunnerSandbox, type RunnerToServer } from "../protocol/runner";
import { ExecutorUnavailableError, type ExecRequest, type ExecResult, type Executor } from "./contract";
import { bearerToken, refuseUpgrade, tokenMatcher } from "./runner/auth";
import { RunnerConnection } from "./runner/connection";
import { createTokenThrottle, type TokenThrottle, type TokenThrottleOptions } from "./runner/throttle";
import { PtyBridge, type PtyChannel } from "./runner/pty";
import { PreviewBridge } from "../preview/bridge";

export { tokenMatcher };
export type { PtyChannel };

export interface RunnerPoolOptions {
  /** Accepted runner tokens (compared in constant time), or a custom check. */
  tokens: readonly string[] | ((token: string) => boolean);
  pingIntervalMs?: number;
  /** A connection that has not said hello by then is closed. */
  helloTimeoutMs?: number;
  /** Wrong-token throttling per remote address (defaults in runner/throttle.ts). */
  throttle?: Omit<TokenThrottleOptions, "log">;
  log?(line: string): void;
}

export interface RunnerStatus {
  id: string;
  connected: boolean;
  sandboxed: boolean;
  sandboxKind: string;
  /** The runner's sandbox facts as it said them in hello (why unsandboxed, what network). */
  sandbox: RunnerSandbox;
  workspace: string;
  version: string;
  connectedAt?: string;
  disconnectedAt?: string;
  sessions: number;
  inflight: number;
  workspaceVersion: number;
}

export interface RunnerStatusEvent {
  runnerId: string;
  connected: boolean;
  sandboxed: boolean;
  /** Sessions bound to this runner (they should show the new state). */
  sessionIds: string[];
}

export interface FilesChangedEvent {
  runnerId: string;
  sessionIds: string[];
  paths: string[];
  version: number;
}

type Listener<E> = (event: E) => void;

export class RunnerPool implements Executor {
  readonly kind = "runner" as const;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
  private readonly authorize: (token: string) => boolean;
  private readonly live = new Map<string, RunnerConnection>();
  private readonly known = new Map<string, RunnerStatus>();
  private readonly bindings = new Map<string, string>();
  private readonly statusListeners = new Set<Listener<RunnerStatusEvent>>();
  private readonly fileListeners = new Set<Listener<FilesChangedEvent>>();
  private readonly handshakes = new Set<WebSocket>();
  private readonly log: (line: string) => void;
  /** Wrong tokens per remote address (runner/throttle.ts). */
  private readonly throttle: TokenThrottle;
  private disposed = false;
  readonly pty: PtyBridge;
  /** The live preview's HTTP streams to ports on the session's runner (server/preview/). */
  readonly preview: PreviewBridge;

  constructor(private readonly options: RunnerPoolOptions) {
    this.authorize = typeof options.tokens === "function" ? options.tokens : tokenMatcher(options.tokens);
    this.log = options.log ?? (() => {});
    this.throttle = createTokenThrottle({ ...options.throttle, log: this.log });
    this.pty = new PtyBridge((sessionId) => this.connectionFor(sessionId));
    this.preview = new PreviewBridge((sessionId) => this.connectionFor(sessionId));
  }

  /** For the HTTP server's `upgrade` event on /runner: refuses a bad or missing token before any WebSocket exists. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.disposed) return refuseUpgrade(socket, 503, "server is shutting down");
    const address = req.socket.remoteAddress ?? "unknown";
    const wait = this.throttle.check(address);
    if (wait > 0) return refuseUpgrade(socket, 429, "too many wrong runner tokens from this address; try again later", `Retry-After: ${Math.ceil(wait / 1000)}\r\n`);
    const token = bearerToken(req);
    if (!token || !this.authorize(token)) {
      this.throttle.failed(address);
      return refuseUpgrade(socket, 401, token ? "runner token refused" : "missing runner token (Authorization: Bearer <token>)");
    }
    this.throttle.succeeded(address);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.awaitHello(ws));
  }

  private awaitHello(ws: WebSocket): void {
    this.handshakes.add(ws);
    const timer = setTimeout(() => ws.close(4001, "no hello"), this.options.helloTimeoutMs ?? 10_000);
    const done = () => {
      clearTimeout(timer);
      this.handshakes.delete(ws);
    };
    ws.once("close", done);
    ws.once("message", (data) => {
      done();
      ws.off("close", done);
      const decoded = decodeFrame(RunnerHello, data);
      if (!decoded.ok) return ws.close(4002, "first frame must be hello");
      const hello = decoded.message;
      if (hello.protocol !== RUNNER_PROTOCOL_VERSION) {
        return ws.close(4003, `protocol ${hello.protocol} not supported (server speaks ${RUNNER_PROTOCOL_VERSION})`);
      }
      this.accept(ws, hello);
    });
  }

  private accept(ws: WebSocket, hello: RunnerHello): void {
    const previous = this.live.get(hello.runnerId);
    // The same runner reconnecting before its old socket timed out replaces it.
    previous?.close(4004, "replaced by a new connection of the same runner");
    const conn = new RunnerConnection(
      ws,
      hello,
      {
        onFrame: (c, msg) => this.onFrame(c, msg),
        onClose: (c, reason) => this.onClose(c, reason),
        log: this.log,
      },
      this.options.pingIntervalMs ?? 15_000,
    );
    this.live.set(hello.runnerId, conn);
    this.known.set(hello.runnerId, {
      id: hello.runnerId,
      connected: true,
      sandboxed: hello.sandbox.available,
      sandboxKind: hello.sandbox.kind,
      sandbox: hello.sandbox,
      workspace: hello.workspace,
      version: hello.version,
      connectedAt: conn.connectedAt.toISOString(),
      sessions: 0,
      inflight: 0,
      workspaceVersion: hello.workspaceVersion,
    });
    this.log(`runner ${hello.runnerId} connected (${hello.workspace}, ${hello.sandbox.available ? `sandbox ${hello.sandbox.kind}` : "unsandboxed"})`);
    this.emitStatus(hello.runnerId, true, hello.sandbox.available);
  }

  private onClose(conn: RunnerConnection, reason: string): void {
    if (this.live.get(conn.id) === conn) {
      this.live.delete(conn.id);
      const st = this.known.get(conn.id);
      if (st) Object.assign(st, { connected: false, disconnectedAt: new Date().toISOString() });
      this.log(`runner ${conn.id} gone: ${reason}`);
      this.emitStatus(conn.id, false, conn.hello.sandbox.available);
    }
    this.pty.runnerGone(conn, reason);
    this.preview.runnerGone(conn, reason);
  }

  private onFrame(conn: RunnerConnection, msg: RunnerToServer): void {
    if (msg.type === "files.changed") {
      const st = this.known.get(conn.id);
      if (st) st.workspaceVersion = msg.version;
      const event = { runnerId: conn.id, sessionIds: this.sessionsOf(conn.id), paths: msg.paths, version: msg.version };
      for (const l of this.fileListeners) safe(() => l(event), this.log);
    } else if (msg.type === "pty.data" || msg.type === "pty.exit") {
      this.pty.fromRunner(conn, msg);
    } else if (msg.type.startsWith("preview.")) {
      this.preview.fromRunner(conn, msg as Extract<RunnerToServer, { type: `preview.${string}` }>);
    }
  }

  /** Binds a session to a runner (e.g. the one stored with the session); without an id, the least busy connected one. */
  bind(sessionId: string, runnerId?: string): string | undefined {
    const chosen = runnerId ?? this.leastBusy();
    if (chosen) this.bindings.set(sessionId, chosen);
    return chosen;
  }

  /** The runner a session is bound to (connected or not). */
  runnerOf(sessionId: string): string | undefined {
    return this.bindings.get(sessionId);
  }

  unbind(sessionId: string): void {
    this.bindings.delete(sessionId);
    this.pty.closeSession(sessionId);
  }

  /** A bound session stays on its runner (its files live there); an unbound one is bound now. */
  private connectionFor(sessionId: string): RunnerConnection | undefined {
    const id = this.bindings.get(sessionId) ?? this.bind(sessionId);
    return id ? this.live.get(id) : undefined;
  }

  available(sessionId: string): boolean {
    const id = this.bindings.get(sessionId);
    return id ? this.live.has(id) : this.live.size > 0;
  }

  async run(request: ExecRequest): Promise<ExecResult> {
    const conn = this.connectionFor(request.sessionId);
    if (!conn) {
      const bound = this.bindings.get(request.sessionId);
      throw new ExecutorUnavailableError(
        bound ? `the runner of this session (${bound}) is not connected` : "no runner is connected to the server",
      );
    }
    return conn.run(request);
  }

  /** Workspace version the session's runner last reported (browser executors compare against it). */
  workspaceVersion(sessionId: string): number | undefined {
    const id = this.bindings.get(sessionId);
    return id ? this.known.get(id)?.workspaceVersion : undefined;
  }

  onFilesChanged(listener: Listener<FilesChangedEvent>): () => void {
    this.fileListeners.add(listener);
    return () => this.fileListeners.delete(listener);
  }

  onStatus(listener: Listener<RunnerStatusEvent>): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /** Every runner seen since start, connected or gone (for /api/health). */
  status(): RunnerStatus[] {
    return [...this.known.values()].map((st) => ({
      ...st,
      sessions: this.sessionsOf(st.id).length,
      inflight: this.live.get(st.id)?.inflight ?? 0,
    }));
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.throttle.dispose();
    this.pty.dispose();
    this.preview.dispose();
    for (const ws of this.handshakes) ws.terminate();
    for (const conn of [...this.live.values()]) conn.close(1001, "server shutting down");
    this.statusListeners.clear();
    this.fileListeners.clear();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private sessionsOf(runnerId: string): string[] {
    return [...this.bindings].filter(([, r]) => r === runnerId).map(([s]) => s);
  }

  private leastBusy(): string | undefined {
    let best: string | undefined;
    let load = Infinity;
    for (const id of [...this.live.keys()].sort()) {
      const n = this.sessionsOf(id).length;
      if (n < load) [best, load] = [id, n];
    }
    return best;
  }

  private emitStatus(runnerId: string, connected: boolean, sandboxed: boolean): void {
    const event = { runnerId, connected, sandboxed, sessionIds: this.sessionsOf(runnerId) };
    for (const l of this.statusListeners) safe(() => l(event), this.log);
  }
}

function safe(fn: () => void, log: (line: string) => void): void {
  try {
    fn();
  } catch (err) {
    log(`runner pool listener failed: ${(err as Error).message}`);
  }
}

export function createRunnerPool(options: RunnerPoolOptions): RunnerPool {
  return new RunnerPool(options);
}
