// The terminal bridge over real WebSockets to a real PTY (node-pty running bash; the runner's
// PTY channel has the same shape).
import { createServer, type Server } from "node:http";
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import * as nodePty from "node-pty";
import type { PtyChannel, PtyExit } from "../executors/runner/pty";
import type { TerminalServerMessage } from "../protocol/terminal";
import { createTerminalBridge, type TerminalBridge } from "./terminal";

function realPty(sessionId: string, size: { cols: number; rows: number }): PtyChannel & { pid: number } {
  const p = nodePty.spawn("bash", ["--norc", "--noprofile", "-i"], { ...size, env: { ...process.env, PS1: "$ " } as Record<string, string> });
  const exits = new Set<(e: PtyExit) => void>();
  p.onExit(({ exitCode, signal }) => exits.forEach((l) => l({ exitCode, ...(signal ? { signal: String(signal) } : {}) })));
  return {
    id: `pty_${randomUUID()}`,
    sessionId,
    pid: p.pid,
    write: (d) => p.write(d),
    resize: (c, r) => p.resize(c, r),
    close: () => p.kill(),
    onData: (l) => {
      const d = p.onData(l);
      return () => d.dispose();
    },
    onExit: (l) => (exits.add(l), () => exits.delete(l)),
  };
}

let server: Server;
let bridge: TerminalBridge;
let opened: Array<PtyChannel & { pid: number }>;
let port: number;

beforeEach(async () => {
  opened = [];
  bridge = createTerminalBridge({
    pty: { open: (s, size) => (opened.push(realPty(s, size)), opened[opened.length - 1]) },
    authorize: async (_req, sessionId) => sessionId !== "forbidden",
    graceMs: 300,
  });
  server = createServer();
  server.on("upgrade", (req, socket, head) => bridge.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as { port: number }).port;
});
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

  it("closes the PTY when no client returns within the grace period", async () => {
    const a = new Client("session=s1&term=t3");
    await a.until(() => a.messages.some((m) => m.type === "attached"));
    expect(bridge.size()).toBe(1);
    await a.close();
    await new Promise((r) => setTimeout(r, 600));
    expect(bridge.size()).toBe(0);
    const b = new Client("session=s1&term=t3&offset=500");
    await b.until(() => b.messages.some((m) => m.type === "attached"));
    expect(b.messages[0]).toMatchObject({ type: "attached", offset: 0, reset: true });
    expect(opened).toHaveLength(2);
    await b.close();
  });

  it("tells the client when the shell exits, and refuses sessions the person cannot use", async () => {
    const a = new Client("session=s1&term=t4");
    await a.until(() => a.messages.some((m) => m.type === "attached"));
    a.send({ type: "input", data: "exit 3\r" });
    await a.until(() => a.messages.some((m) => m.type === "exit"));
    expect(a.messages.find((m) => m.type === "exit")).toMatchObject({ exitCode: 3 });

    const refused = new WebSocket(`ws://127.0.0.1:${port}/terminal?session=forbidden&term=x`);
    const status = await new Promise<number>((r) => refused.on("unexpected-response", (_q, res) => r(res.statusCode ?? 0)));
    expect(status).toBe(403);
    const bad = new WebSocket(`ws://127.0.0.1:${port}/terminal?session=s1&term=../x`);
    expect(await new Promise<number>((r) => bad.on("unexpected-response", (_q, res) => r(res.statusCode ?? 0)))).toBe(400);
  });
});
