// Terminal output flow control and interrupt keys end to end, all real (pty-chain.ts): a page's
// WebSocket that stops reading, the terminal bridge, the PtyBridge over a real runner socket, a
// PtyManager running bash in node-pty. Output stays bounded at every hop however slow the page;
// a passive viewer that does not read is dropped instead of holding the terminal back; ^C skips
// a paste the program does not read, but reaches a raw-mode program as a byte, in order.
// On a loaded machine every hop is slow (a few hundred KB/s at load 12 on 2 cores), so the cases
// wait for what they look for (the PTY paused, a page dropped) with generous deadlines instead
// of sleeping a fixed time that a fast machine needs to fill the kernel's socket buffers.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { TERMINAL_BEHIND_CLOSE } from "../../server/protocol/terminal";
import { eventually, MiB, sleep, startChain, waitFor, type Chain, type Page } from "./pty-chain";

vi.setConfig({ testTimeout: 600_000 });

/** For what a loaded machine may take minutes over (MBs through every hop at a few hundred KB/s). */
const LONG = 300_000;

/** Output held at any hop: the 1 MiB window, a frame or two, the scrollback's replay. */
const BOUND = 3 * MiB;

/** Lines of `seq` a reading page takes (about 3.4 MB, the 1 MiB window several times over). */
const MANY = 500_000;
/** Lines of `seq` that fill the window of a page that stops reading: more than the kernel's
 *  socket buffers on the way take first (500,000 did not, once). */
const FLOOD = 2_000_000;

let chain: Chain;
/** The runner stopped reading the PTY (absent before output flow control: never). */
const ptyPaused = () => chain.manager.pendingOutput?.(chain.channel().id)?.paused ?? false;
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
    t.type(`seq 1 ${MANY}; echo seq-$((1+1))-done\r`);
    await t.until(/seq-2-done\r\n/, LONG);
    const s = (Date.now() - started) / 1000;
    console.log(`seq 1 ${MANY} to a page that reads: ${s} s, ${(t.output().length / MiB / s).toFixed(1)} MiB/s`);
    expectCount(t, MANY, "seq-2-done");
  });

  it("keeps `yes` bounded at every hop while the page reads nothing, and pauses the PTY", async () => {
    const t = await chain.terminal();
    t.ws.pause(); // the page reads nothing
    t.type("yes\r");
    // Until the kernel's socket buffers and then the window are full, and a while after.
    const started = Date.now();
    const most = await watchHops(eventually(ptyPaused, LONG, "the PTY paused").then(() => sleep(1_000)));
    console.log(`yes, page not reading for ${Date.now() - started} ms: ${JSON.stringify(most)}`);
    expect(most.pageSocket).toBeLessThan(BOUND);
    expect(most.runnerUnacked).toBeLessThan(BOUND);
    expect(most.runnerSocket).toBeLessThan(BOUND);
    expect(most.paused).toBe(true); // the runner stopped reading the PTY
    t.ws.resume();
    await t.interrupt("\x03");
    t.type("echo yes-$((2+2))-done\r");
    await t.until("yes-4-done");
  });

  it("delivers `seq` to a slow page complete and in order, bounded meanwhile", async () => {
    const t = await chain.terminal();
    t.type(`seq 1 ${FLOOD}; echo seq-$((1+1))-done\r`);
    // A slow page: it reads nothing until the window fills (the runner stops reading the PTY),
    // then reads until the runner reads again and 200 ms more, and so on. When no more output
    // comes for 2 s without a pause (the program ended, or no flow control) it reads too.
    let finished = false;
    let pauses = 0;
    const done = t.until(/seq-2-done\r\n/, LONG).finally(() => (finished = true));
    const slowPage = async () => {
      while (!finished) {
        t.ws.pause();
        let seen = chain.received();
        let moved = Date.now();
        while (!finished && !ptyPaused() && Date.now() - moved < 2_000) {
          if (chain.received() !== seen) [seen, moved] = [chain.received(), Date.now()];
          await sleep(10);
        }
        if (ptyPaused()) pauses++;
        t.ws.resume();
        while (!finished && ptyPaused()) await sleep(10);
        await sleep(200);
      }
    };
    const most = await watchHops(Promise.all([done, slowPage()]));
    console.log(`seq 1 ${FLOOD} to a slow page, the window filled ${pauses} times: ${JSON.stringify(most)}`);
    expect(most.pageSocket).toBeLessThan(BOUND);
    expect(most.runnerUnacked).toBeLessThan(BOUND);
    expect(most.runnerSocket).toBeLessThan(BOUND);
    // The window did fill, and reading went on after. The page sees each pause (it polls every
    // 10 ms); the hop watcher's 25 ms samples can miss all of them on a loaded machine.
    expect(pauses > 0 || most.paused).toBe(true);
    expectCount(t, FLOOD, "seq-2-done");
  });

  it("drops a passive viewer that reads nothing while the owner's terminal keeps flowing; it can come back", async () => {
    const owner = await chain.terminal();
    const viewer = await chain.terminal("&viewer=1");
    viewer.ws.pause();
    owner.type("seq 1 3000000; echo big-$((3+3))-done\r");
    const ran = owner.until(/big-6-done\r\n/, LONG);
    // Once dropped it reads again, before ws gives up on its close handshake (30 s) and destroys
    // the socket (1006): the close frame is behind what it did not read.
    const dropped = eventually(() => !chain.bridge.pages().some((p) => p.passive), LONG, "the viewer dropped").then(
      async () => {
        viewer.ws.resume();
        await viewer.until(() => viewer.closed() !== undefined, 60_000);
      },
    );
    const most = await watchHops(Promise.all([ran, dropped]));
    console.log(`a viewer reading nothing while the owner's seq ran: ${JSON.stringify(most)}`);
    expectCount(owner, 3_000_000, "big-6-done");
    expect(most.viewerSocket).toBeLessThan(BOUND);
    // Closed: not attached any more, its close frame waiting behind what it did not read.
    expect(chain.bridge.pages().filter((p) => p.passive)).toEqual([]);
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
    const started = Date.now();
    const most = await watchHops(eventually(() => chain.bridge.pages().length === 0, LONG, "the page closed"));
    const closedAfter = Date.now() - started;
    console.log(`yes, the only page not reading, stallMs 1 s, closed after ${closedAfter} ms: ${JSON.stringify(most)}`);
    expect(most.pageSocket).toBeLessThan(BOUND);
    // With no page to keep up with, the PTY is read again (into the scrollback only): more than
    // the window goes by that no page acknowledged.
    const before = chain.received();
    await eventually(() => chain.received() - before > 3 * MiB, LONG, "output read on with no page");
    expect(ptyPaused()).toBe(false);
    t.ws.resume();
    await t.until(() => t.closed() !== undefined, 60_000);
    expect(t.closed()?.code).toBe(TERMINAL_BEHIND_CLOSE);
    const again = await chain.terminal("", false);
    await again.interrupt("\x03");
    again.type("echo back-$((5+5))\r");
    await again.until("back-10");
  });
});

describe("interrupt keys behind queued input", () => {
  it("ends `sleep 120` by ^C (within a second when idle) after a 5 MB paste, drops the paste, and the prompt returns", async () => {
    const t = await chain.terminal();
    t.type("sleep 120\r");
    const sleeper = await waitFor(chain, "sleep");
    // Lines that would run if the paste reached the shell after all.
    const line = "echo junk-$((40+2))\n";
    await t.paste(line.repeat(Math.ceil(5_000_000 / line.length)), 64 * 1024);
    // The window fills; the rest waits in the page's socket.
    await eventually(() => chain.channel().unacked > 512 * 1024, LONG, "the input window filled");
    const pressed = Date.now();
    await t.interrupt("\x03");
    while (await isAlive(sleeper)) {
      if (Date.now() - pressed > 60_000) break;
      await sleep(10);
    }
    const tookMs = Date.now() - pressed;
    console.log(`^C after a 5 MB paste into sleep 120: sleep ended after ${tookMs} ms`);
    // Ended by the key (SIGINT: status 130), long before its own end; under 1 s on an idle
    // machine, seconds at load 12, where a key queued behind the paste would never arrive.
    expect(tookMs).toBeLessThan(20_000);
    t.type("echo after-$?-$((2+3))\r");
    await t.until("after-130-5", 60_000);
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
    await t.until("raw-2-done", LONG);
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
