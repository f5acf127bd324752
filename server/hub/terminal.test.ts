// The terminal bridge over real WebSockets to a real PTY (node-pty running bash; the runner's
// PTY channel has the same shape).
import { createServer, type Server } from "node:http";
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import * as nodePty from "node-pty";
import type { PtyChannel, PtyExit } from "../executors/runner/pty";
import type { TerminalServerMessage } from "../protocol/terminal";
import { createTerminalBridge, type TerminalBridge, type TerminalBridgeDeps } from "./terminal";

type TestPty = PtyChannel & { pid: number; lose(reason: string): void };

function realPty(sessionId: string, size: { cols: number; rows: number }): TestPty {
  const p = nodePty.spawn("bash", ["--norc", "--noprofile", "-i"], {
    ...size,
    env: { ...process.env, PS1: "$ " } as Record<string, string>,
  });
  const exits = new Set<(e: PtyExit) => void>();
  p.onExit(({ exitCode, signal }) =>
    exits.forEach((l) => l({ exitCode, ...(signal ? { signal: String(signal) } : {}) })),
  );
  return {
    id: `pty_${randomUUID()}`,
    sessionId,
    pid: p.pid,
    write: (d) => (p.write(d), true),
    unacked: 0,
    onDrain: () => () => {},
    resize: (c, r) => p.resize(c, r),
    close: () => p.kill(),
    onData: (l) => {
      const d = p.onData(l);
      return () => d.dispose();
    },
    onExit: (l) => (exits.add(l), () => exits.delete(l)),
    // As PtyBridge.runnerGone reports a PTY whose runner's connection dropped.
    lose: (reason) => {
      exits.forEach((l) => l({ exitCode: null, signal: `runner disconnected: ${reason}`, runnerLost: reason }));
      p.kill();
    },
  };
}

let server: Server;
let bridge: TerminalBridge;
let opened: TestPty[];
let port: number;

async function start(options: Partial<TerminalBridgeDeps> = {}) {
  bridge?.dispose();
  await new Promise((r) => (server?.listening ? server.close(r) : r(undefined)));
  opened = [];
  bridge = createTerminalBridge({
    pty: { open: (s, size) => (opened.push(realPty(s, size)), opened[opened.length - 1]) },
    authorize: async (_req, sessionId) => sessionId !== "forbidden",
    idleMs: 300,
    ...options,
  });
  server = createServer();
  server.on("upgrade", (req, socket, head) => bridge.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
}
beforeEach(() => start());
afterEach(async () => {
  bridge.dispose();
  for (const p of opened) p.close();
  await new Promise((r) => server.close(r));
});

class Client {
  text = "";
  messages: TerminalServerMessage[] = [];
  ws: WebSocket;
  constructor(query: string) {
    this.ws = new WebSocket(`ws://127.0.0.1:${port}/terminal?${query}`);
    this.ws.on("message", (raw) => {
      const msg = JSON.parse(raw.toString()) as TerminalServerMessage;
      this.messages.push(msg);
      if (msg.type === "data") this.text += msg.data;
    });
  }
  async until(pred: () => boolean, ms = 5000) {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out; got ${JSON.stringify(this.text.slice(-300))}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  send(msg: object) {
    this.ws.send(JSON.stringify(msg));
  }
  async close() {
    this.ws.close();
    await new Promise((r) => this.ws.once("close", r));
  }
}

describe("terminal bridge", () => {
  it("round-trips input and output and follows resizes", async () => {
    const c = new Client("session=s1&term=t1&cols=100&rows=30");
    await c.until(() => c.messages.some((m) => m.type === "attached"));
    c.send({ type: "input", data: "echo $((6*7))\r" });
    await c.until(() => c.text.includes("42"));
    c.send({ type: "resize", cols: 123, rows: 17 });
    c.send({ type: "input", data: "stty size\r" });
    await c.until(() => c.text.includes("17 123"));
    await c.close();
  });

  it("a page that gives no size (a hidden tab) attaches without resizing the shell; one that does resizes it", async () => {
    const shown = new Client("session=s1&term=tsize&cols=100&rows=30");
    await shown.until(() => shown.messages.some((m) => m.type === "attached"));
    const hidden = new Client("session=s1&term=tsize&offset=0");
    await hidden.until(() => hidden.messages.some((m) => m.type === "attached"));
    shown.send({ type: "input", data: "stty size\r" });
    await shown.until(() => shown.text.includes("30 100"));
    const other = new Client("session=s1&term=tsize&cols=90&rows=20&offset=0");
    await other.until(() => other.messages.some((m) => m.type === "attached"));
    other.send({ type: "input", data: "stty size\r" });
    await other.until(() => other.text.includes("20 90"));
    expect(opened).toHaveLength(1);
    await Promise.all([shown.close(), hidden.close(), other.close()]);
  });

  it("re-attaches to the same shell after a drop and replays only what was missed", async () => {
    const a = new Client("session=s1&term=t2");
    await a.until(() => a.messages.some((m) => m.type === "attached"));
    a.send({ type: "input", data: "X=kept; echo first-$X\r" });
    await a.until(() => a.text.includes("first-kept"));
    await new Promise((r) => setTimeout(r, 100));
    const seen = a.text.length;
    await a.close();
    // Output produced while nobody is attached is kept for the reconnect.
    opened[0].write("echo while-away\r");
    await new Promise((r) => setTimeout(r, 150));

    const b = new Client(`session=s1&term=t2&offset=${seen}`);
    await b.until(() => b.text.includes("while-away"));
    expect(b.messages[0]).toMatchObject({ type: "attached", offset: seen, reset: false });
    expect(b.text).not.toContain("first-kept");
    b.send({ type: "input", data: "echo again-$X\r" });
    await b.until(() => b.text.includes("again-kept"));
    expect(opened).toHaveLength(1);

    // A reload (offset 0) gets the whole scrollback.
    await b.close();
    const c = new Client("session=s1&term=t2&offset=0");
    await c.until(() => c.text.includes("again-kept"));
    expect(c.text).toContain("first-kept");
    await c.close();
  });

  it("keeps a terminal with no page attached past the old 30 s, and a page coming back gets its scrollback", async () => {
    await start({ idleMs: undefined }); // the default limit (60 min)
    const a = new Client("session=s1&term=t3");
    await a.until(() => a.messages.some((m) => m.type === "attached"));
    a.send({ type: "input", data: "(sleep 31; echo dev-server-still-up) &\r" });
    a.send({ type: "input", data: "echo marker-before\r" });
    await a.until(() => a.text.includes("marker-before"));
    await a.close();
    await new Promise((r) => setTimeout(r, 32_000));
    expect(bridge.size()).toBe(1);
    // Another page (offset 0): the same shell, its scrollback, and what ran while nobody looked.
    const b = new Client("session=s1&term=t3&offset=0");
    await b.until(() => b.text.includes("dev-server-still-up"));
    expect(b.messages[0]).toMatchObject({ type: "attached", offset: 0, reset: false });
    expect(b.text).toContain("marker-before");
    expect(opened).toHaveLength(1);
    await b.close();
  }, 60_000);

  it("ends a terminal after the idle limit with no page, and says so to a page that comes back", async () => {
    const list = new Client("session=s1&list=1");
    await list.until(() => list.messages.some((m) => m.type === "terminals"));
    expect(list.messages[0]).toMatchObject({ type: "terminals", terminals: [], idleMinutes: 0.01 });
    const a = new Client("session=s1&term=t5");
    await a.until(() => a.messages.some((m) => m.type === "attached"));
    await list.until(() => list.messages.some((m) => m.type === "terminals" && m.terminals.length === 1));
    await a.close();
    await new Promise((r) => setTimeout(r, 700));
    expect(bridge.size()).toBe(0);
    expect(bridge.list("s1")).toMatchObject([{ term: "t5", ended: { kind: "idle", minutes: 0.01 } }]);
    await list.until(() => list.messages.some((m) => m.type === "terminals" && m.terminals[0]?.ended?.kind === "idle"));

    const b = new Client("session=s1&term=t5&offset=500");
    await b.until(() => b.messages.some((m) => m.type === "ended"));
    expect(b.messages).toEqual([{ type: "ended", reason: { kind: "idle", minutes: 0.01 } }]);
    expect(opened).toHaveLength(1);
    // Enter in the ended tab asks for a new shell under the same id.
    const c = new Client("session=s1&term=t5&restart=1");
    await c.until(() => c.messages.some((m) => m.type === "attached"));
    expect(opened).toHaveLength(2);
    await list.until(() =>
      list.messages.some((m) => m.type === "terminals" && m.terminals.length === 1 && !m.terminals[0].ended),
    );
    await c.close();
    await list.close();
  });

  it("attaches several pages to one terminal at once: output to all, input from any", async () => {
    const a = new Client("session=s1&term=t6");
    await a.until(() => a.messages.some((m) => m.type === "attached"));
    const b = new Client("session=s1&term=t6");
    await b.until(() => b.messages.some((m) => m.type === "attached"));
    a.send({ type: "input", data: "echo from-a-$((1+1))\r" });
    await b.until(() => b.text.includes("from-a-2"));
    b.send({ type: "input", data: "echo from-b-$((2+2))\r" });
    await a.until(() => a.text.includes("from-b-4"));
    expect(opened).toHaveLength(1);
    // One page leaving does not start the idle clock while another is attached.
    await a.close();
    await new Promise((r) => setTimeout(r, 600));
    expect(bridge.size()).toBe(1);
    // × in a page closes it for every page.
    b.send({ type: "close" });
    await b.until(() => b.messages.some((m) => m.type === "ended"));
    expect(b.messages.find((m) => m.type === "ended")).toEqual({ type: "ended", reason: { kind: "closed" } });
    expect(bridge.list("s1")).toEqual([]);
  });

  it("says a terminal's runner was lost, and caps the running terminals of a session", async () => {
    await start({ maxPerSession: 2 });
    const a = new Client("session=s1&term=t7");
    await a.until(() => a.messages.some((m) => m.type === "attached"));
    const b = new Client("session=s1&term=t8");
    await b.until(() => b.messages.some((m) => m.type === "attached"));
    const c = new Client("session=s1&term=t9");
    await c.until(() => c.messages.some((m) => m.type === "error"));
    expect(c.messages[0]).toMatchObject({ type: "error", message: expect.stringContaining("at most 2") });
    expect(opened).toHaveLength(2);
    opened[0].lose("socket closed");
    await a.until(() => a.messages.some((m) => m.type === "ended"));
    expect(a.messages.find((m) => m.type === "ended")).toEqual({
      type: "ended",
      reason: { kind: "runner", message: "socket closed" },
    });
    expect(bridge.list("s1").find((t) => t.term === "t7")).toMatchObject({ ended: { kind: "runner" } });
    await b.close();
  });

  it("tells the client when the shell exits, and refuses sessions the person cannot use", async () => {
    const a = new Client("session=s1&term=t4");
    await a.until(() => a.messages.some((m) => m.type === "attached"));
    a.send({ type: "input", data: "exit 3\r" });
    await a.until(() => a.messages.some((m) => m.type === "ended"));
    expect(a.messages.find((m) => m.type === "ended")).toEqual({
      type: "ended",
      reason: { kind: "exited", exitCode: 3 },
    });
    expect(bridge.list("s1")).toMatchObject([{ term: "t4", ended: { kind: "exited", exitCode: 3 } }]);

    const refused = new WebSocket(`ws://127.0.0.1:${port}/terminal?session=forbidden&term=x`);
    const status = await new Promise<number>((r) =>
      refused.on("unexpected-response", (_q, res) => r(res.statusCode ?? 0)),
    );
    expect(status).toBe(403);
    const bad = new WebSocket(`ws://127.0.0.1:${port}/terminal?session=s1&term=../x`);
    expect(await new Promise<number>((r) => bad.on("unexpected-response", (_q, res) => r(res.statusCode ?? 0)))).toBe(
      400,
    );
  });
});

describe("the idle limit's variable", () => {
  it("defaults to 60 minutes and refuses a limit of zero", async () => {
    const { parseEnv, EnvError } = await import("../env");
    expect(parseEnv({}).QUIVER_TERMINAL_IDLE_MINUTES).toBe(60);
    expect(parseEnv({ QUIVER_TERMINAL_IDLE_MINUTES: "240" }).QUIVER_TERMINAL_IDLE_MINUTES).toBe(240);
    expect(() => parseEnv({ QUIVER_TERMINAL_IDLE_MINUTES: "0" })).toThrow(EnvError);
  });
});
