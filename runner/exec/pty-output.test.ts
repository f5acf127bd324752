// Terminal output flow control and interrupt keys end to end, all real (pty-chain.ts): a page's
// WebSocket that stops reading, the terminal bridge, the PtyBridge over a real runner socket, a
// PtyManager running bash in node-pty. Output stays bounded at every hop however slow the page;
// a passive viewer that does not read is dropped instead of holding the terminal back; ^C skips
// a paste the program does not read, but reaches a raw-mode program as a byte, in order.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { TERMINAL_BEHIND_CLOSE } from "../../server/protocol/terminal";
import { MiB, sleep, startChain, waitFor, type Chain, type Page } from "./pty-chain";

vi.setConfig({ testTimeout: 120_000 });

/** Output held at any hop: the 1 MiB window, a frame or two, the scrollback's replay. */
const BOUND = 3 * MiB;

let chain: Chain;
beforeEach(async () => {
  chain = await startChain();
});
afterEach(() => chain.dispose());

/** The largest figures seen at each hop while `during` runs. */
async function watchHops(during: Promise<unknown>) {
  const most = { pageSocket: 0, viewerSocket: 0, runnerUnacked: 0, runnerSocket: 0, rssGrowth: 0, paused: false };
  const rss = process.memoryUsage().rss;
  let running = true;
  void during.finally(() => (running = false));
  while (running) {
    for (const p of chain.pageSockets()) {
      const hop = p.viewer ? "viewerSocket" : "pageSocket";
      most[hop] = Math.max(most[hop], p.buffered);
    }
    // Absent before output flow control (pendingOutput): the runner held nothing, it sent it all.
    const out = chain.manager.pendingOutput?.(chain.channel().id);
    most.runnerUnacked = Math.max(most.runnerUnacked, out?.unacked ?? 0);
    most.paused ||= out?.paused ?? false;
    most.runnerSocket = Math.max(most.runnerSocket, chain.runnerSide.bufferedAmount);
    most.rssGrowth = Math.max(most.rssGrowth, process.memoryUsage().rss - rss);
    await sleep(25);
  }
  await during;
  return most;
}

/** The numbers 1..n, one per line, and nothing else between them and `end`. */
function expectCount(page: Page, n: number, end: string): void {
  const out = page.output();
  // From the first number after the command's echo (and whatever modes the shell set after it).
  const echo = out.indexOf("-done");
  const first = /[\r\n]1\r\n/.exec(out.slice(echo))!;
  const body = out.slice(echo + first.index + 1, out.lastIndexOf(end));
  const lines = body.split("\r\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const wrong = lines.findIndex((l, i) => l !== String(i + 1));
  expect(wrong === -1 ? "all in order" : `line ${wrong + 1}: ${JSON.stringify(lines[wrong])}`).toBe("all in order");
  expect(lines.length).toBe(n);
}

describe("terminal output flow control", () => {
  it("keeps up with a page that reads", async () => {
    const t = await chain.terminal();
    const started = Date.now();
    t.type("seq 1 2000000; echo seq-$((1+1))-done\r");
    await t.until(/seq-2-done\r\n/, 100_000);
    const s = (Date.now() - started) / 1000;
    console.log(`seq 1 2000000 to a page that reads: ${s} s, ${(t.output().length / MiB / s).toFixed(1)} MiB/s`);
    expectCount(t, 2_000_000, "seq-2-done");
  });

  it("keeps `yes` bounded at every hop while the page reads nothing, and pauses the PTY", async () => {
    const t = await chain.terminal();
    t.ws.pause(); // the page reads nothing
    t.type("yes\r");
    const most = await watchHops(sleep(3_000));
    console.log(`yes, page not reading for 3 s: ${JSON.stringify(most)}`);
    expect(most.pageSocket).toBeLessThan(BOUND);
    expect(most.runnerUnacked).toBeLessThan(BOUND);
    expect(most.runnerSocket).toBeLessThan(BOUND);
    expect(most.paused).toBe(true); // the runner stopped reading the PTY
    t.ws.resume();
    await t.interrupt("\x03");
    t.type("echo yes-$((2+2))-done\r");
    await t.until("yes-4-done");
  });

  it("delivers `seq 1 2000000` to a slow page complete and in order, bounded meanwhile", async () => {
    const t = await chain.terminal();
    t.type("seq 1 2000000; echo seq-$((1+1))-done\r");
    // A slow page: it reads 200 ms in every 4.2 s, long enough apart for the kernel's socket
    // buffers (MBs on loopback) and then the window to fill.
    let reading = true;
    let slow: NodeJS.Timeout | undefined;
    const toggle = () => {
      reading = !reading;
      if (reading) t.ws.resume();
      else t.ws.pause();
      slow = setTimeout(toggle, reading ? 200 : 4_000);
    };
    toggle();
    const most = await watchHops(t.until(/seq-2-done\r\n/, 100_000).finally(() => clearTimeout(slow)));
    t.ws.resume();
    console.log(`seq 1 2000000 to a slow page: ${JSON.stringify(most)}`);
    expect(most.pageSocket).toBeLessThan(BOUND);
    expect(most.runnerUnacked).toBeLessThan(BOUND);
    expect(most.runnerSocket).toBeLessThan(BOUND);
    expect(most.paused).toBe(true); // the window did fill, and reading went on after
    expectCount(t, 2_000_000, "seq-2-done");
  });

  it("drops a passive viewer that reads nothing while the owner's terminal keeps flowing; it can come back", async () => {
    const owner = await chain.terminal();
    const viewer = await chain.terminal("&viewer=1");
    viewer.ws.pause();
    owner.type("seq 1 3000000; echo big-$((3+3))-done\r");
    const most = await watchHops(owner.until(/big-6-done\r\n/, 100_000));
    console.log(`a viewer reading nothing while the owner's seq ran: ${JSON.stringify(most)}`);
    expectCount(owner, 3_000_000, "big-6-done");
    expect(most.viewerSocket).toBeLessThan(BOUND);
    // Closed: not attached any more, its close frame waiting behind what it did not read.
    expect(chain.bridge.pages().filter((p) => p.passive)).toEqual([]);
    viewer.ws.resume();
    await viewer.until(() => viewer.closed() !== undefined);
    expect(viewer.closed()?.code).toBe(TERMINAL_BEHIND_CLOSE);
    // Back, it is replayed what the scrollback holds.
    const again = await chain.terminal("&viewer=1");
    await again.until("big-6-done");
  });
});

describe("a page that takes no output", () => {
  it("is closed after stallMs, and the terminal runs on into its scrollback", async () => {
    await chain.dispose();
    chain = await startChain({ stallMs: 1_000 });
    const t = await chain.terminal();
    t.ws.pause();
    t.type("yes\r");
    const most = await watchHops(sleep(4_000));
    console.log(`yes, the only page not reading, stallMs 1 s: ${JSON.stringify(most)}`);
    expect(chain.bridge.pages()).toEqual([]);
    expect(most.pageSocket).toBeLessThan(BOUND);
    // With no page to keep up with, the PTY is read again (into the scrollback only).
    expect(chain.manager.pendingOutput(chain.channel().id)?.paused).toBe(false);
    t.ws.resume();
    await t.until(() => t.closed() !== undefined);
    expect(t.closed()?.code).toBe(TERMINAL_BEHIND_CLOSE);
    const again = await chain.terminal("", false);
    await again.interrupt("\x03");
    again.type("echo back-$((5+5))\r");
    await again.until("back-10");
  });
});

describe("interrupt keys behind queued input", () => {
  it("ends `sleep 30` within a second of ^C after a 5 MB paste, drops the paste, and the prompt returns", async () => {
    const t = await chain.terminal();
    t.type("sleep 30\r");
    const sleeper = await waitFor(chain, "sleep");
    // Lines that would run if the paste reached the shell after all.
    const line = "echo junk-$((40+2))\n";
    await t.paste(line.repeat(Math.ceil(5_000_000 / line.length)), 64 * 1024);
    await sleep(500); // the window fills; the rest waits in the page's socket
    expect(chain.channel().unacked).toBeGreaterThan(512 * 1024);
    const pressed = Date.now();
    await t.interrupt("\x03");
    while (await isAlive(sleeper)) {
      if (Date.now() - pressed > 5_000) break;
      await sleep(10);
    }
    const tookMs = Date.now() - pressed;
    console.log(`^C after a 5 MB paste into sleep 30: sleep ended after ${tookMs} ms`);
    expect(tookMs).toBeLessThan(1_000);
    t.type("echo after-$((2+3))\r");
    await t.until("after-5", 30_000);
    await sleep(500);
    expect(t.output()).not.toContain("junk-42");
    expect(chain.manager.pendingInput(chain.channel().id)).toBe(0);
  });

  it("gives ^C to a raw-mode program (stty raw -isig) as a byte, after the input typed before it", async () => {
    const t = await chain.terminal();
    const n = 2 * MiB;
    t.type(
      `stty raw -isig -echo; sleep 2; head -c ${n + 1} | tail -c 4 | cat -v; stty sane; echo; echo raw-$((1+1))-done\r`,
    );
    await waitFor(chain, "sleep");
    await t.paste("x".repeat(n), 64 * 1024);
    await sleep(300);
    await t.interrupt("\x03");
    await t.until("raw-2-done", 60_000);
    expect(t.output()).toContain("xxx^C");
  });
});

async function isAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
    const { readFile } = await import("node:fs/promises");
    return !/\) Z /.test(await readFile(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
