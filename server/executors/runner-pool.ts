// The runner executor: accepts authenticated runner connections on /runner, routes each session
// to its workspace on its runner (where the placement stored in the database says: `locate`,
// services/placement.ts), runs tool operations there (see runner/connection.ts) naming that
// workspace, relays workspace change events and bridges PTYs and the preview. A session whose
// runner is gone fails at once with which runner and since when. Executors never touch the
// database or the model themselves: what they need comes through the hooks they are given.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { RunnerHello, RunnerSandbox, RunnerToServer } from "../protocol/runner";
import { ExecutorUnavailableError, type ExecRequest, type ExecResult, type Executor } from "./contract";
import { bearerToken, refuseUpgrade, tokenIndexer, tokenMatcher, type BoundToken } from "./runner/auth";
import { identityCheck, type IdentityRefusal } from "./runner/identity";
import { RunnerConnection } from "./runner/connection";
import { handshake } from "./runner/handshake";
import type { RunnerKeyStore } from "./runner/key-store";
import { createTokenThrottle, type TokenThrottle, type TokenThrottleOptions } from "./runner/throttle";
import { PtyBridge, type PtyChannel } from "./runner/pty";
import { PreviewBridge } from "../preview/bridge";
import { SessionBindings } from "./session-bindings";
import { requestAddress } from "../http/address-key";

export { tokenMatcher };
export type { BoundToken, PtyChannel };

export interface RunnerPoolOptions {
  /** Accepted runner tokens (compared in constant time), or a custom check. A bound token (the
   *  local runner's, QUIVER_RUNNER_TOKENS') connects only as its runner id, and no other token
   *  may claim that id or one that looks like it. */
  tokens: readonly (string | BoundToken)[] | ((token: string) => boolean);
  pingIntervalMs?: number;
  /** A connection that has not said hello by then is closed. */
  helloTimeoutMs?: number;
  /** Runner ids bound to runners' keys (runner/key-store.ts): a runner of a shared token must
   *  prove the key its id was first seen with. Absent: ids are not bound to keys (the pool alone). */
  keys?: RunnerKeyStore;
  /** Wrong-token throttling per remote address (defaults in runner/throttle.ts). */
  throttle?: Omit<TokenThrottleOptions, "log">;
  log?(line: string): void;
}

/** Where a session works: its workspace (absent: the runner's default folder) on a runner. */
export interface SessionPlace {
  runnerId: string;
  workspaceId?: string;
  /** When the runner was last known to go (from the database, for a runner this process never saw). */
  goneSince?: string;
}

/** Finds a session's place (the placement service); undefined: it has none yet (no runner fits). */
export type SessionLocator = (sessionId: string) => Promise<SessionPlace | undefined>;

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
  /** --root runners serve many workspaces; labels, capacity and free disk as said in hello. */
  root: boolean;
  labels: string[];
  capacity?: number;
  freeDiskBytes?: number;
  /** Workspaces the runner reported in hello. */
  workspaces: number;
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
  /** The hello of the connection that came or went. */
  hello: RunnerHello;
  /** When it went (connected: false). */
  at: string;
}

export interface FilesChangedEvent {
  runnerId: string;
  sessionIds: string[];
  paths: string[];
  version: number;
}

type Listener<E> = (event: E) => void;

export type TokenAdmission =
  { ok: true; tokenIndex: number } | { ok: false; status: 401 | 429; error: string; retryAfterS?: number };

export class RunnerPool implements Executor {
  readonly kind = "runner" as const;
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
  /** Which token a runner presented (-1: none); a custom check answers 0 for any it accepts. */
  private readonly tokenOf: (token: string) => number;
  /** Why a hello's id is refused for the token presented (runner/identity.ts). */
  private readonly identityRefusal: (runnerId: string, tokenIndex: number) => IdentityRefusal | undefined;
  private readonly live = new Map<string, RunnerConnection>();
  private readonly known = new Map<string, RunnerStatus>();
  private readonly bindings = new SessionBindings<SessionPlace>();
  /** File versions per runner and workspace ("" for the default folder). */
  private readonly versions = new Map<string, number>();
  private locator?: SessionLocator;
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
    const { tokens } = options;
    if (typeof tokens === "function") {
      this.tokenOf = (t) => (tokens(t) ? 0 : -1);
      this.identityRefusal = () => undefined;
    } else {
      this.tokenOf = tokenIndexer(tokens);
      this.identityRefusal = identityCheck(tokens);
    }
    this.log = options.log ?? (() => {});
    this.throttle = createTokenThrottle({ ...options.throttle, log: this.log });
    this.pty = new PtyBridge(
      (sessionId) => this.connectionFor(sessionId),
      (sessionId) => this.bindings.get(sessionId)?.workspaceId,
    );
    this.preview = new PreviewBridge(
      (sessionId) => this.connectionFor(sessionId),
      (sessionId) => this.bindings.get(sessionId)?.workspaceId,
    );
  }

  /** From now on sessions go where `locate` says (the database's placement), never to whichever
   *  runner happens to be connected. Without one (the pool alone, in its own tests) an unbound
   *  session is bound to the least busy connected runner. */
  setLocator(locate: SessionLocator): void {
    this.locator = locate;
  }

  /**
   * A runner's Bearer token on `req`, throttled per address: every door a runner token opens
   * (/runner, GET /api/uploads/<id>) asks here, so wrong guesses count against one budget.
   */
  admitToken(req: IncomingMessage): TokenAdmission {
    const address = requestAddress(req);
    const wait = this.throttle.check(address);
    if (wait > 0)
      return {
        ok: false,
        status: 429,
        error: "too many wrong runner tokens from this address; try again later",
        retryAfterS: Math.ceil(wait / 1000),
      };
    const token = bearerToken(req);
    const tokenIndex = token ? this.tokenOf(token) : -1;
    if (!token || tokenIndex < 0) {
      this.throttle.failed(address);
      const error = token ? "runner token refused" : "missing runner token (Authorization: Bearer <token>)";
      return { ok: false, status: 401, error };
    }
    this.throttle.succeeded(address);
    return { ok: true, tokenIndex };
  }

  /** For the HTTP server's `upgrade` event on /runner: refuses a bad or missing token before any WebSocket exists. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.disposed) return refuseUpgrade(socket, 503, "server is shutting down");
    const admitted = this.admitToken(req);
    if (!admitted.ok)
      return refuseUpgrade(
        socket,
        admitted.status,
        admitted.error,
        admitted.retryAfterS ? `Retry-After: ${admitted.retryAfterS}\r\n` : undefined,
      );
    const { tokenIndex } = admitted;
    this.wss.handleUpgrade(req, socket, head, (ws) => this.awaitHello(ws, tokenIndex));
  }

  private awaitHello(ws: WebSocket, tokenIndex: number): void {
    this.handshakes.add(ws);
    ws.once("close", () => this.handshakes.delete(ws));
    handshake(
      ws,
      tokenIndex,
      {
        helloTimeoutMs: this.options.helloTimeoutMs ?? 10_000,
        identityRefusal: this.identityRefusal,
        bound: (i) => typeof this.options.tokens !== "function" && typeof this.options.tokens[i] === "object",
        keys: this.options.keys,
        log: this.log,
      },
      (hello, early) => {
        this.handshakes.delete(ws);
        this.accept(ws, hello);
        // What the runner sent while its key was checked reaches the connection, in order.
        for (const data of early) ws.emit("message", data, false);
      },
    );
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
      root: hello.root ?? false,
      labels: hello.labels ?? [],
      ...(hello.capacity !== undefined ? { capacity: hello.capacity } : {}),
      ...(hello.freeDiskBytes !== undefined ? { freeDiskBytes: hello.freeDiskBytes } : {}),
      workspaces: hello.workspaces?.length ?? 0,
      sessions: 0,
      inflight: 0,
      workspaceVersion: hello.workspaceVersion,
    });
    this.versions.set(`${hello.runnerId}/`, hello.workspaceVersion);
    this.log(
      `runner ${hello.runnerId} connected (${hello.workspace}, ${hello.sandbox.available ? `sandbox ${hello.sandbox.kind}` : "unsandboxed"})`,
    );
    this.emitStatus(hello, true);
  }

  private onClose(conn: RunnerConnection, reason: string): void {
    if (this.live.get(conn.id) === conn) {
      this.live.delete(conn.id);
      const st = this.known.get(conn.id);
      if (st) Object.assign(st, { connected: false, disconnectedAt: new Date().toISOString() });
      this.log(`runner ${conn.id} gone: ${reason}`);
      this.emitStatus(conn.hello, false);
    }
    this.pty.runnerGone(conn, reason);
    this.preview.runnerGone(conn, reason);
  }

  private onFrame(conn: RunnerConnection, msg: RunnerToServer): void {
    if (msg.type === "files.changed") {
      // The default folder's changes may name it by its id (hello's `default` entry) or by none.
      const defaultId = conn.hello.workspaces?.find((w) => w.default)?.id;
      const workspaceId = msg.workspaceId === defaultId ? undefined : msg.workspaceId;
      const st = this.known.get(conn.id);
      if (st && !workspaceId) st.workspaceVersion = msg.version;
      this.versions.set(`${conn.id}/${workspaceId ?? ""}`, msg.version);
      const sessionIds = this.sessionsOf(conn.id).filter((s) => this.bindings.get(s)?.workspaceId === workspaceId);
      const event = { runnerId: conn.id, sessionIds, paths: msg.paths, version: msg.version };
      for (const l of this.fileListeners) safe(() => l(event), this.log);
    } else if (
      msg.type === "pty.data" ||
      msg.type === "pty.ack" ||
      msg.type === "pty.interrupted" ||
      msg.type === "pty.exit"
    ) {
      this.pty.fromRunner(conn, msg);
    } else if (msg.type.startsWith("preview.")) {
      this.preview.fromRunner(conn, msg as Extract<RunnerToServer, { type: `preview.${string}` }>);
    }
  }

  /** Binds a session to a runner and workspace; without a runner id, the least busy connected one
   *  (only the pool's own tests: the server's sessions are placed by `locate`). */
  bind(sessionId: string, runnerId?: string, workspaceId?: string): string | undefined {
    const chosen = runnerId ?? this.leastBusy();
    if (chosen) this.bindings.set(sessionId, { runnerId: chosen, ...(workspaceId ? { workspaceId } : {}) });
    return chosen;
  }

  /** The runner a session is bound to (connected or not). */
  runnerOf(sessionId: string): string | undefined {
    return this.bindings.get(sessionId)?.runnerId;
  }

  unbind(sessionId: string): void {
    this.bindings.delete(sessionId);
    this.pty.closeSession(sessionId);
  }

  /** Forgets where sessions are (their workspace was deleted or moved): the next call asks `locate`. */
  forgetWorkspace(workspaceId: string): void {
    for (const [sessionId, place] of this.bindings.entries())
      if (place.workspaceId === workspaceId) this.unbind(sessionId);
  }

  /** The session's place: remembered, or asked of the locator (a place without a runner is not remembered). */
  async place(sessionId: string): Promise<SessionPlace | undefined> {
    const known = this.bindings.get(sessionId);
    if (known) return known;
    if (!this.locator) return this.bind(sessionId) ? this.bindings.get(sessionId) : undefined;
    const found = await this.locator(sessionId);
    if (found) this.bindings.set(sessionId, found);
    // A session the database does not know (a test driving the pool directly): a runner's default folder, as before projects.
    else if (found === undefined && this.bind(sessionId)) return this.bindings.get(sessionId);
    return found;
  }

  /** A bound session stays on its runner (its files live there). Synchronous paths (terminal,
   *  preview) find the place `place()` remembered when their socket was authorized. */
  private connectionFor(sessionId: string): RunnerConnection | undefined {
    if (!this.bindings.has(sessionId) && !this.locator) this.bind(sessionId);
    const place = this.bindings.get(sessionId);
    return place ? this.live.get(place.runnerId) : undefined;
  }

  available(sessionId: string): boolean {
    const place = this.bindings.get(sessionId);
    return place ? this.live.has(place.runnerId) : this.live.size > 0;
  }

  /** Why a session's calls cannot run now, in words the IDE shows (which runner, since when). */
  unavailableReason(sessionId: string): string | undefined {
    const place = this.bindings.get(sessionId);
    if (!place)
      return this.locator
        ? "this session has no workspace on a runner yet: no connected runner can take it"
        : this.live.size
          ? undefined
          : "no runner is connected to the server";
    if (this.live.has(place.runnerId)) return undefined;
    const since = this.known.get(place.runnerId)?.disconnectedAt ?? place.goneSince;
    return `this session's workspace is on runner ${place.runnerId}, which is not connected${since ? ` (gone since ${since})` : " to this server"}; its history stays readable, and its calls work again once that runner is back`;
  }

  async run(request: ExecRequest): Promise<ExecResult> {
    const place = await this.place(request.sessionId);
    const conn = place && this.live.get(place.runnerId);
    if (!conn)
      throw new ExecutorUnavailableError(
        this.unavailableReason(request.sessionId) ?? "no runner is connected to the server",
      );
    return conn.run(request, place.workspaceId);
  }

  /** Runs a workspace operation (workspace.create/delete/usage) on one runner. */
  async runOn(
    runnerId: string,
    op: string,
    input: unknown,
    timeoutMs = 120_000,
    workspaceId?: string,
  ): Promise<ExecResult> {
    const conn = this.live.get(runnerId);
    if (!conn)
      throw new ExecutorUnavailableError(
        `runner ${runnerId} is not connected${this.known.get(runnerId)?.disconnectedAt ? ` (gone since ${this.known.get(runnerId)?.disconnectedAt})` : " to this server"}`,
      );
    const signal = new AbortController().signal;
    return conn.run(
      {
        sessionId: `runner-${runnerId}`.slice(0, 200),
        callId: `${op}-${Date.now()}`,
        op,
        input,
        deadline: Date.now() + timeoutMs,
        signal,
      },
      workspaceId,
    );
  }

  /** Connected to this server now. */
  isLive(runnerId: string): boolean {
    return this.live.has(runnerId);
  }

  /** Workspace version the session's runner last reported for its workspace (browser executors compare against it). */
  workspaceVersion(sessionId: string): number | undefined {
    const place = this.bindings.get(sessionId);
    return place ? this.versions.get(`${place.runnerId}/${place.workspaceId ?? ""}`) : undefined;
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
      sessions: this.bindings.countOn(st.id),
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
    return this.bindings.sessionsOn(runnerId);
  }

  private leastBusy(): string | undefined {
    let best: string | undefined;
    let load = Infinity;
    for (const id of [...this.live.keys()].sort()) {
      const n = this.bindings.countOn(id);
      if (n < load) [best, load] = [id, n];
    }
    return best;
  }

  private emitStatus(hello: RunnerHello, connected: boolean): void {
    const runnerId = hello.runnerId;
    const event = {
      runnerId,
      connected,
      sandboxed: hello.sandbox.available,
      sessionIds: this.sessionsOf(runnerId),
      hello,
      at: new Date().toISOString(),
    };
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
