// A runner at its terminal limit, through the whole real chain (page sockets, the server's bridge
// and PtyBridge, a real WebSocket, the runner's PtyManager running bash): the terminal no page has
// shown for longest makes room for a new one, and its tab says why; one a page shows never does;
// one at its prompt goes before one running a program, in its foreground or in the background.
import { execFileSync } from "node:child_process";
import { afterEach, expect, it, vi } from "vitest";
import WebSocket from "ws";
import type { TerminalInfo, TerminalServerMessage } from "../../server/protocol/terminal";
import { eventually, sleep, startChain, type Chain } from "./pty-chain";
import type { PtyManager } from "./pty";
import { sandboxInfo } from "./sandbox";

vi.setConfig({ testTimeout: 60_000 });

let chain: Chain | undefined;
afterEach(async () => {
  await chain?.dispose();
  chain = undefined;
});

/** The session's terminals as a page's list socket last heard them. */
async function listOf(c: Chain) {
  const ws = new WebSocket(`${c.url}/terminal?session=s1&list=1`);
  let terms: TerminalInfo[] = [];
  ws.on("message", (raw) => {
    const m = JSON.parse(String(raw)) as TerminalServerMessage;
    if (m.type === "terminals") terms = m.terminals;
  });
  await new Promise((r) => ws.once("open", r));
  return { get: (term: string) => terms.find((t) => t.term === term), close: () => ws.close() };
}

const pages = (c: Chain) => c.bridge.pages().length;
const shells = (m: PtyManager) => m.size;

it("closes the terminal no page has shown for longest to open another, never one a page shows", async () => {
  const c = (chain = await startChain({}, { maxPtys: 2 }));
  const list = await listOf(c);
  const t1 = await c.terminal("&term=t1");
  const t2 = await c.terminal("&term=t2");

  // Both are shown: a third is refused, as before.
  await c.terminal("&term=t3", false);
  await eventually(() => list.get("t3")?.ended !== undefined, 30_000, "t3 refused");
  expect(list.get("t3")?.ended).toEqual({ kind: "exited", exitCode: null, signal: "too many terminals are open" });

  // t1's page goes first, then t2's: t1 is the one unseen longest.
  t1.ws.close();
  await eventually(() => pages(c) === 1, 30_000, "t1's page detached");
  await sleep(50);
  t2.ws.close();
  await eventually(() => pages(c) === 0, 30_000, "t2's page detached");

  const t4 = await c.terminal("&term=t4");
  t4.type("echo fourth-$((2*2))\r");
  await t4.until("fourth-4");
  await eventually(() => list.get("t1")?.ended !== undefined, 30_000, "t1 reclaimed");
  expect(list.get("t1")?.ended).toMatchObject({ kind: "reclaimed" });
  expect(list.get("t2")?.ended).toBeUndefined();
  await eventually(() => shells(c.manager) === 2, 30_000, "t1's shell gone");

  // A page comes back to t2: now both running terminals are shown, and a fifth is refused.
  const back = await c.terminal("&term=t2");
  back.type("echo still-$((3*3))\r");
  await back.until("still-9");
  await c.terminal("&term=t5", false);
  await eventually(() => list.get("t5")?.ended !== undefined, 30_000, "t5 refused");
  expect(list.get("t5")?.ended).toMatchObject({ kind: "exited", signal: "too many terminals are open" });
  expect(list.get("t2")?.ended).toBeUndefined();
  expect(list.get("t4")?.ended).toBeUndefined();
  list.close();
});

it("a read-only viewer counts as showing a terminal: the one no page shows is taken instead", async () => {
  const c = (chain = await startChain({}, { maxPtys: 2 }));
  const list = await listOf(c);
  const t1 = await c.terminal("&term=t1");
  const t2 = await c.terminal("&term=t2");
  t1.ws.close();
  await eventually(() => pages(c) === 1, 30_000, "t1's page detached");
  // A read-only viewer attaches to t1 while t2's page leaves: t2 is the only one unseen.
  await c.terminal("&term=t1&viewer=1");
  await eventually(() => pages(c) === 2, 30_000, "the viewer attached");
  t2.ws.close();
  await eventually(() => pages(c) === 1, 30_000, "t2's page detached");
  await c.terminal("&term=t3");
  await eventually(() => list.get("t2")?.ended !== undefined, 30_000, "t2 reclaimed");
  expect(list.get("t2")?.ended).toMatchObject({ kind: "reclaimed" });
  expect(list.get("t1")?.ended).toBeUndefined();
  list.close();
});

it("takes a terminal at its prompt before one running a program, though that one was left unseen first", async () => {
  const c = (chain = await startChain({}, { maxPtys: 2 }));
  const list = await listOf(c);
  const t1 = await c.terminal("&term=t1");
  const t2 = await c.terminal("&term=t2");
  // t1 runs a program in the foreground, as a dev server would, when its page goes first.
  const seconds = 6000 + Math.floor(Math.random() * 999);
  t1.type(`sleep ${seconds}\r`);
  const running = () => {
    try {
      return execFileSync("pgrep", ["-f", `^sleep ${seconds}$`], { encoding: "utf8" }).trim() !== "";
    } catch {
      return false;
    }
  };
  await eventually(running, 30_000, "t1's program started");
  t1.ws.close();
  await eventually(() => pages(c) === 1, 30_000, "t1's page detached");
  await sleep(50);
  t2.ws.close();
  await eventually(() => pages(c) === 0, 30_000, "t2's page detached");
  await c.manager.programsRead();

  const t3 = await c.terminal("&term=t3");
  t3.type("echo third-$((1+2))\r");
  await t3.until("third-3");
  await eventually(() => list.get("t2")?.ended !== undefined, 30_000, "t2 reclaimed");
  expect(list.get("t2")?.ended).toMatchObject({ kind: "reclaimed" });
  expect(list.get("t1")?.ended).toBeUndefined();
  expect(running()).toBe(true);

  // t3, at its prompt once unseen, goes next too, though t1 has been unseen longer.
  t3.ws.close();
  await eventually(() => pages(c) === 0, 30_000, "t3's page detached");
  await c.manager.programsRead();
  await c.terminal("&term=t4");
  await eventually(() => list.get("t3")?.ended !== undefined, 30_000, "t3 reclaimed");
  expect(list.get("t1")?.ended).toBeUndefined();
  list.close();
});

const bubblewrap = sandboxInfo("auto");
for (const sandbox of [sandboxInfo("off"), bubblewrap])
  it.skipIf(sandbox === bubblewrap && !bubblewrap.available)(
    `counts a job left in the background as a program running (${sandbox.kind})`,
    async () => {
      const c = (chain = await startChain({}, { maxPtys: 3, sandbox }));
      const list = await listOf(c);
      const seconds = 6000 + Math.floor(Math.random() * 999);
      const running = (n: number) => {
        try {
          return execFileSync("pgrep", ["-f", `^sleep ${n}$`], { encoding: "utf8" }).trim() !== "";
        } catch {
          return false;
        }
      };
      // t1 starts a job and gets its prompt back; t2 orphans one (`(cmd &)`); t3 only ran one
      // that ended. They leave in that order, so t1 is the one unseen longest.
      const t1 = await c.terminal("&term=t1");
      const t2 = await c.terminal("&term=t2");
      const t3 = await c.terminal("&term=t3");
      t1.type(`sleep ${seconds} &\r`);
      t2.type(`(sleep ${seconds + 1} &)\r`);
      t3.type("sleep 0.1; echo ran-$((4+4))\r");
      await t3.until("ran-8");
      await eventually(() => running(seconds) && running(seconds + 1), 30_000, "both jobs started");
      for (const [i, t] of [t1, t2, t3].entries()) {
        t.ws.close();
        await eventually(() => pages(c) === 2 - i, 30_000, `t${i + 1}'s page detached`);
        await sleep(50);
      }
      await c.manager.programsRead();

      await c.terminal("&term=t4");
      await eventually(() => list.get("t3")?.ended !== undefined, 30_000, "t3 reclaimed");
      expect(list.get("t3")?.ended).toMatchObject({ kind: "reclaimed" });
      // Of the two with jobs, the one unseen longest goes next, and its job with it.
      await c.terminal("&term=t5");
      await eventually(() => list.get("t1")?.ended !== undefined, 30_000, "t1 reclaimed");
      expect(list.get("t2")?.ended).toBeUndefined();
      await eventually(() => !running(seconds), 30_000, "t1's job ended with it");
      expect(running(seconds + 1)).toBe(true);
      list.close();
    },
  );
