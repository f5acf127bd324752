// Terminal input backpressure end to end, all real (pty-chain.ts): a browser-side WebSocket to
// the server's terminal bridge, the server's PtyBridge over a RunnerConnection (a real WebSocket)
// to a PtyManager running bash in node-pty. A flood into a program that does not read stays
// bounded at every hop; input within bounds reaches the program complete and in order.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { PTY_INPUT_WINDOW, type RunnerToServer } from "../../server/protocol/runner";
import { scrubEnv } from "./env";
import { PtyManager } from "./pty";
import { descendant, eventually, MiB, startChain, type Chain } from "./pty-chain";
import { sandboxInfo } from "./sandbox";

vi.setConfig({ testTimeout: 90_000 });

/** The bound every hop must keep: the 1 MiB window plus a frame or two already read. */
const BOUND = 3 * MiB;

let chain: Chain;
beforeEach(async () => {
  chain = await startChain();
});
afterEach(() => chain.dispose());

/** A page whose socket is paused: 8 MiB typed into `sleep <seconds>`, which reads none of it. */
async function pausedBehindFlood(seconds: number) {
  const t = await chain.terminal();
  t.type(`stty raw -echo; sleep ${seconds}\r`);
  await new Promise((r) => setTimeout(r, 300));
  const flood = "z".repeat(512 * 1024);
  for (let i = 0; i < 16; i++) t.type(flood);
  // The window fills and its socket is paused (on a loaded machine that takes seconds). The
  // runner then acknowledges what the PTY's own buffer took, so the count settles a little under
  // the window (1,034,752 once): still far above the half where the socket reads again.
  await eventually(() => chain.channel().unacked >= 0.9 * PTY_INPUT_WINDOW, 60_000, "the input window full");
  return t;
}

describe("terminal input flow control", () => {
  it("keeps a 64 MiB flood into a program that does not read bounded at every hop, then the terminal works", async () => {
    const t = await chain.terminal();
    const total = 64 * MiB;
    // Raw mode: the line discipline passes every byte on, so head consumes the flood exactly.
    t.type(`stty raw -echo; sleep 30; head -c ${total} >/dev/null; stty sane; echo flood-$((20+1))\r`);
    const ptyPid = chain.manager.pid(chain.channel().id)!;
    let sleeper: number | undefined;
    for (let i = 0; i < 200 && !sleeper; i++) {
      sleeper = await descendant(ptyPid, "sleep");
      if (!sleeper) await new Promise((r) => setTimeout(r, 25));
    }
    expect(sleeper).toBeDefined();
    const frame = 512 * 1024;
    const flood = "x".repeat(frame);
    const sending = (async () => {
      for (let sent = 0; sent < total; sent += frame) {
        while (t.ws.bufferedAmount > 8 * MiB) await new Promise((r) => setTimeout(r, 5));
        t.type(flood);
      }
    })();
    const most = { accepted: 0, unacked: 0, runnerPending: 0, toRunner: 0 };
    for (let i = 0; i < 60; i++) {
      await new Promise((r) => setTimeout(r, 50));
      most.accepted = Math.max(most.accepted, chain.accepted());
      most.unacked = Math.max(most.unacked, chain.channel().unacked ?? Infinity);
      most.runnerPending = Math.max(most.runnerPending, chain.manager.pendingInput?.(chain.channel().id) ?? Infinity);
      most.toRunner = Math.max(most.toRunner, chain.conn.ws.bufferedAmount);
    }
    console.log(`flood into sleep, most seen over 3 s: ${JSON.stringify(most)}`);
    // Everything past the bound waits in the client (its socket buffer and TCP), not here.
    expect(most.accepted).toBeLessThan(BOUND + MiB);
    expect(most.unacked).toBeLessThan(BOUND);
    expect(most.runnerPending).toBeLessThan(BOUND);
    expect(most.toRunner).toBeLessThan(BOUND);
    process.kill(sleeper!, "SIGKILL");
    const killed = Date.now();
    await sending;
    await t.until("flood-21", 60_000);
    console.log(
      `the rest of the flood went through at ${Math.round(total / MiB / ((Date.now() - killed) / 1000))} MiB/s`,
    );
    t.type("echo after-$((2+3))\r");
    await t.until("after-5");
    t.ws.close();
  });

  it("closes a terminal whose socket is paused behind a flood, through the list socket", async () => {
    const t = await pausedBehindFlood(30);
    const ended = new Promise<string>((resolve) =>
      t.ws.on("message", (raw) => {
        const m = JSON.parse(String(raw)) as { type: string; reason?: { kind: string } };
        if (m.type === "ended") resolve(m.reason!.kind);
      }),
    );
    const list = new WebSocket(`${chain.url}/terminal?session=s1&list=1`);
    await new Promise((r) => list.once("open", r));
    list.send(JSON.stringify({ type: "close", term: "t1" }));
    expect(await ended).toBe("closed");
    for (let i = 0; i < 200 && chain.manager.size > 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(chain.manager.size).toBe(0);
    list.close();
  });

  it("notices a page gone while its socket is paused behind a flood: the terminal goes idle", async () => {
    await chain.dispose();
    chain = await startChain({ idleMs: 500, pausedProbeMs: 100 });
    const t = await pausedBehindFlood(300);
    // A page that is there takes the probes in stride: still attached, the terminal kept.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(chain.bridge.pages()).toHaveLength(1);
    expect(chain.manager.size).toBe(1);
    // Gone without a word (a closed tab, a crashed browser): its close waits unread behind the flood.
    t.ws.terminate();
    await eventually(() => chain.bridge.pages().length === 0, 10_000, "the page detached");
    await eventually(() => chain.manager.size === 0, 10_000, "the terminal ended by the idle limit");
  });

  it("delivers 5 MB pasted in chunks complete and in order, held bounded while the reader starts late", async () => {
    const t = await chain.terminal();
    // ASCII, two- and four-byte characters, so frames split between characters are checked too.
    const parts: string[] = [];
    let seed = 7;
    let size = 0;
    while (size < 5_000_000) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const part = `${seed.toString(36)}é😀\n`.repeat(1 + (seed % 5));
      parts.push(part);
      size += Buffer.byteLength(part);
    }
    const data = parts.join("");
    const bytes = Buffer.byteLength(data);
    t.type(`stty raw -echo; sleep 2; head -c ${bytes} > in.bin; stty sane; echo got-$((6*7))\r`);
    await new Promise((r) => setTimeout(r, 300));
    let most = 0;
    const watch = setInterval(() => (most = Math.max(most, chain.accepted())), 20);
    // Chunks of odd sizes, some splitting a surrogate pair across frames of the page's socket.
    const pasting = (async () => {
      let at = 0;
      for (let i = 0; at < data.length; i++) {
        let n = [1, 7, 4096, 65_537, 300_001][i % 5];
        const code = data.charCodeAt(at + n - 1);
        if (code >= 0xd800 && code <= 0xdbff) n++;
        t.type(data.slice(at, at + n));
        at += n;
        while (t.ws.bufferedAmount > 8 * MiB) await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await new Promise((r) => setTimeout(r, 1_200));
    const whileSleeping = most;
    await pasting;
    await t.until("got-42", 60_000);
    clearInterval(watch);
    console.log(`5 MB paste: accepted ${whileSleeping} characters while the reader slept`);
    expect(whileSleeping).toBeLessThan(BOUND);
    const got = await readFile(join(chain.dir, "in.bin"));
    expect(got.length).toBe(bytes);
    expect(got.equals(Buffer.from(data))).toBe(true);
    t.ws.close();
  });
});

describe("the runner's own cap on input", () => {
  it("drops input past its cap from a server that ignores pty.ack, says so, and acknowledges it all", async () => {
    const sent: RunnerToServer[] = [];
    const m = new PtyManager({
      workspaceRoot: chain.dir,
      sandbox: sandboxInfo("off"),
      env: scrubEnv({ ...process.env, HOME: chain.dir }),
      send: (f) => (sent.push(f), true),
    });
    try {
      const text = () => sent.flatMap((f) => (f.type === "pty.data" ? [f.data] : [])).join("");
      const acked = () => sent.reduce((n, f) => n + (f.type === "pty.ack" ? f.bytes : 0), 0);
      const until = async (check: () => boolean, what: string) => {
        for (const deadline = Date.now() + 20_000; !check(); await new Promise((r) => setTimeout(r, 20)))
          if (Date.now() > deadline)
            throw new Error(`timed out waiting for ${what}: ${JSON.stringify(text().slice(-200))}`);
      };
      m.handle({ type: "pty.open", ptyId: "p1", sessionId: "s1", cols: 80, rows: 24 });
      await until(() => /[$#] /.test(text()), "the prompt");
      m.handle({
        type: "pty.input",
        ptyId: "p1",
        data: "stty raw -echo; sleep 30; timeout 3 cat >/dev/null; stty sane; echo back-$((4+4))\r",
      });
      await new Promise((r) => setTimeout(r, 500));
      const frame = "y".repeat(256 * 1024);
      let most = 0;
      for (let i = 0; i < 64; i++) {
        m.handle({ type: "pty.input", ptyId: "p1", data: frame });
        most = Math.max(most, m.pendingInput?.("p1") ?? Infinity);
      }
      console.log(`16 MiB with no acks heeded: at most ${most} bytes held by the runner`);
      expect(most).toBeLessThanOrEqual(4 * MiB);
      await until(() => text().includes("input dropped"), "the note");
      // Every byte is accounted for: written to the PTY or dropped, none left unacknowledged.
      const sleeper = await descendant(m.pid("p1")!, "sleep");
      process.kill(sleeper!, "SIGKILL");
      await until(() => text().includes("back-8") && m.pendingInput("p1") === 0, "the shell back");
      await new Promise((r) => setTimeout(r, 50));
      const typed = Buffer.byteLength(
        "stty raw -echo; sleep 30; timeout 3 cat >/dev/null; stty sane; echo back-$((4+4))\r",
      );
      expect(acked()).toBe(typed + 64 * frame.length);
    } finally {
      await m.dispose();
    }
  });

  it.runIf(sandboxInfo("auto").available)(
    "counts input typed while a sandboxed terminal's first output is held, and acknowledges it once written",
    async () => {
      const sent: RunnerToServer[] = [];
      const m = new PtyManager({
        workspaceRoot: chain.dir,
        sandbox: sandboxInfo("auto"),
        env: scrubEnv({ ...process.env, HOME: chain.dir }),
        send: (f) => (sent.push(f), true),
      });
      try {
        const line = "echo typed-$((1+2))\r";
        m.handle({ type: "pty.open", ptyId: "h1", sessionId: "s1", cols: 80, rows: 24 });
        m.handle({ type: "pty.input", ptyId: "h1", data: line });
        // Queued (the network namespace first, then the hold), not lost, not yet acknowledged.
        expect(sent.some((f) => f.type === "pty.ack")).toBe(false);
        const text = () => sent.flatMap((f) => (f.type === "pty.data" ? [f.data] : [])).join("");
        for (const deadline = Date.now() + 20_000; !text().includes("typed-3");) {
          if (Date.now() > deadline) throw new Error(`no typed-3: ${JSON.stringify(text().slice(-200))}`);
          await new Promise((r) => setTimeout(r, 20));
        }
        await new Promise((r) => setTimeout(r, 50));
        expect(m.pendingInput("h1")).toBe(0);
        expect(sent.reduce((n, f) => n + (f.type === "pty.ack" ? f.bytes : 0), 0)).toBe(line.length);
      } finally {
        await m.dispose();
      }
    },
  );
});
