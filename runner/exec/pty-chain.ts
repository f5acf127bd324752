// For tests: a terminal's whole real chain in one process. A page's WebSocket to the server's
// terminal bridge, the server's PtyBridge over a RunnerConnection (a real WebSocket) to a
// PtyManager running bash in node-pty. `?viewer=1` on a terminal socket makes it a passive viewer.
import { createServer, type Server } from "node:http";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import WebSocket, { WebSocketServer } from "ws";
import { RunnerConnection } from "../../server/executors/runner/connection";
import { PtyBridge, type PtyChannel } from "../../server/executors/runner/pty";
import { createTerminalBridge, type TerminalBridge, type TerminalBridgeDeps } from "../../server/hub/terminal";
import { decodeFrame, RunnerHello, ServerToRunner } from "../../server/protocol/runner";
import type { PtyMessage } from "../ops";
import { scrubEnv } from "./env";
import { PtyManager, type PtyOptions } from "./pty";
import { sandboxInfo } from "./sandbox";

export const MiB = 1024 * 1024;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `met()` holds; a loaded machine may take long, so deadlines are generous. */
export async function eventually(met: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!met()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(10);
  }
}

export interface Chain {
  dir: string;
  manager: PtyManager;
  conn: RunnerConnection;
  /** The runner's end of its connection to the server. */
  runnerSide: WebSocket;
  bridge: TerminalBridge;
  /** ws://host:port of the server's HTTP side. */
  url: string;
  /**
   * The server's end of each page's terminal socket: bytes written to it and not yet taken by the
   * kernel (what ws's bufferedAmount counts), read off the socket itself.
   */
  pageSockets(): Array<{ viewer: boolean; buffered: number }>;
  /** The newest PTY channel the bridge opened. */
  channel(): PtyChannel;
  /** Characters the bridge handed to the PTY channel (what the server took off the page's socket). */
  accepted(): number;
  /** Output characters the PTY channel gave the bridge (what the runner read from the PTY and sent). */
  received(): number;
  /** A page's terminal socket; `prompt`: wait for the shell's prompt (not for a viewer, by default). */
  terminal(query?: string, prompt?: boolean): Promise<Page>;
  dispose(): Promise<void>;
}

export type Page = Awaited<ReturnType<typeof page>>;

export async function startChain(
  deps: Partial<TerminalBridgeDeps> = {},
  runner: Partial<PtyOptions> = {},
): Promise<Chain> {
  const dir = await mkdtemp(join(tmpdir(), "quiver-flow-"));
  let accepted = 0;
  let received = 0;
  let channel: PtyChannel | undefined;
  let conn!: RunnerConnection;
  const runnerWss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise((r) => runnerWss.once("listening", r));
  const ptys = new PtyBridge(() => conn);
  const connected = new Promise<void>((resolve) =>
    runnerWss.once("connection", (ws) => {
      const hello = RunnerHello.parse({
        type: "hello",
        protocol: 1,
        runnerId: "flow",
        workspace: dir,
        version: "0",
        sandbox: { available: false, kind: "none" },
        workspaceVersion: 0,
        ptyAck: true,
        ptyReclaim: true,
      });
      conn = new RunnerConnection(
        ws,
        hello,
        {
          onFrame: (c, m) => {
            if (m.type === "pty.data" || m.type === "pty.ack" || m.type === "pty.interrupted" || m.type === "pty.exit")
              ptys.fromRunner(c, m);
          },
          onClose: (c, reason) => ptys.runnerGone(c, reason),
          log: () => {},
        },
        60_000,
      );
      resolve();
    }),
  );
  const runnerSide = new WebSocket(`ws://127.0.0.1:${(runnerWss.address() as { port: number }).port}`);
  const manager = new PtyManager({
    workspaceRoot: dir,
    sandbox: sandboxInfo("off"),
    env: scrubEnv({ ...process.env, HOME: dir }),
    send: (m) => runnerSide.readyState === WebSocket.OPEN && (runnerSide.send(JSON.stringify(m)), true),
    ...runner,
  });
  runnerSide.on("message", (raw) => {
    const d = decodeFrame(ServerToRunner, raw);
    if (d.ok && d.message.type.startsWith("pty.")) manager.handle(d.message as PtyMessage);
  });
  await connected;
  if (runnerSide.readyState !== WebSocket.OPEN) await new Promise((r) => runnerSide.once("open", r));
  const bridge = createTerminalBridge({
    pty: {
      open: (s, size) => {
        const c = ptys.open(s, size);
        const write = c.write.bind(c);
        channel = Object.assign(Object.create(c) as PtyChannel, {
          write: (d: string) => ((accepted += d.length), write(d)),
          onData: (f: (d: string) => void) => c.onData((d) => ((received += d.length), f(d))),
        });
        return channel;
      },
    },
    authorize: async (req) => (new URL(req.url ?? "/", "http://x").searchParams.get("viewer") === "1" ? "view" : true),
    ...deps,
  });
  const http: Server = createServer();
  const upgraded: Array<{ viewer: boolean; socket: Duplex }> = [];
  http.on("upgrade", (req, socket, head) => {
    const q = new URL(req.url ?? "/", "http://x").searchParams;
    if (q.has("term")) upgraded.push({ viewer: q.get("viewer") === "1", socket });
    bridge.handleUpgrade(req, socket, head);
  });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const port = (http.address() as { port: number }).port;
  return {
    dir,
    manager,
    conn,
    runnerSide,
    bridge,
    url: `ws://127.0.0.1:${port}`,
    pageSockets: () =>
      upgraded.filter((u) => !u.socket.destroyed).map((u) => ({ viewer: u.viewer, buffered: u.socket.writableLength })),
    channel: () => channel!,
    accepted: () => accepted,
    received: () => received,
    terminal: (query = "", prompt = !query.includes("viewer=1")) => page(port, query, prompt),
    async dispose() {
      bridge.dispose();
      await manager.dispose();
      runnerSide.terminate();
      await new Promise((r) => runnerWss.close(r));
      await new Promise((r) => http.close(r));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A page's terminal socket: its output as text, and input with the browser's own buffering. */
async function page(port: number, query: string, prompt: boolean) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/terminal?session=s1&term=t1&cols=200&rows=24${query}`);
  // Output in pieces, joined when asked for: a string grown by += is re-flattened on each search.
  let pieces: string[] = [];
  const out = () => pieces.join("");
  let closed: { code: number; reason: string } | undefined;
  /** As the page does (xterm-view.tsx): frames sent, and the socket's id to name it by. */
  let frames = 0;
  let socket: string | undefined;
  let list: WebSocket | undefined;
  ws.on("message", (raw) => {
    const m = JSON.parse(String(raw)) as { type: string; data?: string; socket?: string };
    if (m.type === "data") pieces.push(m.data!);
    if (m.type === "attached") socket = m.socket;
  });
  ws.on("close", (code, reason) => {
    closed = { code, reason: reason.toString() };
    list?.close();
  });
  await new Promise((r) => ws.once("open", r));
  const until = async (text: string | RegExp | (() => boolean), ms = 30_000) => {
    const deadline = Date.now() + ms;
    // Only what came since the last look (and a little before it) is searched: output runs to MBs.
    let seen = 0;
    let tail = "";
    const met = () => {
      if (typeof text === "function") return text();
      const fresh = tail + pieces.slice(seen).join("");
      seen = pieces.length;
      tail = fresh.slice(-256);
      return typeof text === "string" ? fresh.includes(text) : text.test(fresh);
    };
    while (!met()) {
      if (Date.now() > deadline)
        throw new Error(`no ${String(text)}; output ends ${JSON.stringify(out().slice(-300))}`);
      await sleep(20);
    }
  };
  const type = (data: string) => (frames++, ws.send(JSON.stringify({ type: "input", data })));
  /** An interrupt key as the page types it: in a frame of its own, and said on the session's list socket. */
  const interrupt = async (key: string) => {
    if (!list) {
      list = new WebSocket(`ws://127.0.0.1:${port}/terminal?session=s1&list=1`);
      list.on("error", () => {}); // closed with its terminal socket, maybe still opening
      await new Promise((r) => list!.once("open", r));
    }
    list.send(JSON.stringify({ type: "interrupt", term: "t1", socket, key, after: frames }));
    type(key);
  };
  /** Sends `data` in frames of `frame` characters, waiting while the socket's own buffer is over 8 MiB. */
  const paste = async (data: string, frame: number) => {
    for (let at = 0; at < data.length; at += frame) {
      while (ws.bufferedAmount > 8 * MiB) await sleep(5);
      type(data.slice(at, at + frame));
    }
  };
  if (prompt) await until(/[$#] /); // the login shell's prompt
  return { ws, until, type, paste, interrupt, output: out, clear: () => (pieces = []), closed: () => closed };
}

/** The pid of `name` below `root` in the process tree (the test's own processes only). */
export async function descendant(root: number, name: string): Promise<number | undefined> {
  const children = new Map<number, number[]>();
  const names = new Map<number, string>();
  for (const e of await readdir("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    const stat = await readFile(`/proc/${e}/stat`, "utf8").catch(() => "");
    const m = /^(\d+) \((.*)\) \S+ (\d+)/.exec(stat);
    if (!m) continue;
    names.set(Number(m[1]), m[2]);
    children.set(Number(m[3]), [...(children.get(Number(m[3])) ?? []), Number(m[1])]);
  }
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    if (pid !== root && names.get(pid) === name) return pid;
    stack.push(...(children.get(pid) ?? []));
  }
  return undefined;
}

/** Waits for `name` to run below the PTY's process. */
export async function waitFor(chain: Chain, name: string): Promise<number> {
  const ptyPid = chain.manager.pid(chain.channel().id)!;
  for (let i = 0; i < 200; i++) {
    const pid = await descendant(ptyPid, name);
    if (pid) return pid;
    await sleep(25);
  }
  throw new Error(`${name} did not start`);
}
