// Test harness (tests only): a minimal server end of the /runner socket speaking the protocol
// frame by frame (no pool, no database), and a real runner process started with `--root`, so a
// test can name workspaces on every request, terminal and preview frame.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, realpathSync } from "node:fs";
import { createServer, type RequestListener, type Server } from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { WebSocketServer, type WebSocket } from "ws";
import { decodeFrame, RunnerToServer, type RunnerHello, type ServerToRunner } from "../../server/protocol/runner";
import { TEST_TOKEN, waitFor } from "../../server/testing/runner";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * A fresh folder outside /tmp, as a real runner root or data folder is: every sandbox has a
 * private /tmp, which would hide a sibling there whatever the runner's own masks do.
 */
export async function outsideTmp(prefix: string): Promise<string> {
  return realpathSync(mkdtempSync(`/var/tmp/${prefix}`));
}

export interface Result {
  ok: boolean;
  output: string;
  meta?: Record<string, unknown>;
}

export class FakeServer {
  readonly frames: RunnerToServer[] = [];
  private ws?: WebSocket;
  private seq = 0;
  private readonly http: Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  port = 0;

  /** `onHttp`: answers the plain HTTP requests the runner makes of its server (an upload's GET). */
  constructor(onHttp?: RequestListener) {
    this.http = createServer(onHttp ?? ((_q, r) => r.writeHead(404).end()));
    this.http.on("upgrade", (req, socket, head) => {
      if (req.headers.authorization !== `Bearer ${TEST_TOKEN}`) return socket.destroy();
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        this.ws = ws;
        ws.on("message", (raw) => {
          const d = decodeFrame(RunnerToServer, raw);
          if (d.ok) this.frames.push(d.message);
        });
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((r) => this.http.listen(this.port, "127.0.0.1", () => r()));
    this.port = (this.http.address() as { port: number }).port;
    return `ws://127.0.0.1:${this.port}/runner`;
  }

  /** The latest hello (after `since` frames). */
  async hello(since = 0): Promise<RunnerHello> {
    return waitFor(
      () => this.frames.slice(since).findLast((f): f is RunnerHello => f.type === "hello"),
      60_000,
      "hello",
    );
  }

  send(frame: ServerToRunner): void {
    this.ws?.send(JSON.stringify(frame));
  }

  async request(
    op: string,
    input: unknown,
    o: { workspaceId?: string; sessionId?: string; timeoutMs?: number } = {},
  ): Promise<Result> {
    const id = `r${++this.seq}`;
    const deadline = Date.now() + (o.timeoutMs ?? 30_000);
    this.send({
      type: "request",
      id,
      sessionId: o.sessionId ?? "s1",
      op,
      input,
      deadline,
      ...(o.workspaceId ? { workspaceId: o.workspaceId } : {}),
    });
    const r = await waitFor(
      () => this.frames.find((f) => f.type === "result" && f.id === id),
      (o.timeoutMs ?? 30_000) + 5_000,
      `result of ${op}`,
    );
    return r as Result;
  }

  /** Runs a command in a workspace's sandbox; its output and exit line. */
  async shell(workspaceId: string, command: string, extra: Record<string, unknown> = {}): Promise<string> {
    return (await this.request("shell", { command, ...extra }, { workspaceId })).output;
  }

  /** Opens a terminal; `text()` is all it printed so far. */
  terminal(workspaceId: string, ptyId: string) {
    this.send({ type: "pty.open", ptyId, sessionId: "s1", workspaceId, cols: 200, rows: 50 });
    const text = () =>
      this.frames.flatMap((f) => (f.type === "pty.data" && f.ptyId === ptyId ? [f.data] : [])).join("");
    return {
      text,
      type: (data: string) => this.send({ type: "pty.input", ptyId, data }),
      until: (re: RegExp, ms = 20_000) => waitFor(() => re.test(text()), ms, `terminal output ${re}`),
      exited: () => this.frames.some((f) => f.type === "pty.exit" && f.ptyId === ptyId),
    };
  }

  /** A GET through a workspace's preview: the status, or the error code the runner gave. */
  async preview(workspaceId: string, port: number): Promise<{ status?: number; body: string; error?: string }> {
    const streamId = `p${++this.seq}`;
    this.send({
      type: "preview.request",
      streamId,
      sessionId: "s1",
      workspaceId,
      port,
      method: "GET",
      path: "/",
      headers: [["host", `127.0.0.1:${port}`]],
      hasBody: false,
      deadline: Date.now() + 15_000,
    });
    const end = await waitFor(
      () => this.frames.find((f) => f.type === "preview.end" && f.streamId === streamId),
      20_000,
      "preview end",
    );
    const head = this.frames.find((f) => f.type === "preview.head" && f.streamId === streamId);
    const body = this.frames
      .flatMap((f) =>
        f.type === "preview.data" && f.streamId === streamId ? [Buffer.from(f.data, "base64").toString()] : [],
      )
      .join("");
    return {
      ...(head?.type === "preview.head" ? { status: head.status } : {}),
      body,
      ...(end.type === "preview.end" && end.error ? { error: end.error.code } : {}),
    };
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    this.http.closeAllConnections();
    await new Promise<void>((r) => this.http.close(() => r()));
  }
}

export interface RootRunner {
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr(): string;
  stop(): Promise<void>;
}

export function spawnRootRunner(url: string, args: string[], env: Record<string, string> = {}): RootRunner {
  const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "runner/main.ts"), "--server", url, ...args], {
    cwd: ROOT,
    env: { ...process.env, QUIVER_RUNNER_TOKEN: TEST_TOKEN, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  child.stderr!.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return {
    child,
    exited,
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
