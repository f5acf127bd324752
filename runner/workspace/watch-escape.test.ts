// The agent swaps a new folder for a link to a folder it may not see, in the instant between the
// folder's creation and the watcher's watch on a folder inside it: a watcher that adds watches by
// path then watches the hidden folder and announces the names made there as the workspace's own.
// Run with the runner's real sandbox, a real swap loop and a real hidden folder being written.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { helperSandbox, type HelperSandbox } from "../exec/helper-sandbox";
import { sandboxInfo } from "../exec/sandbox";
import { Workspace } from "./workspace";

const sandbox = sandboxInfo("auto");
let base: string;
let ws: string;
let hidden: string;
let workspace: Workspace;
let helpers: HelperSandbox | undefined;
let announced: string[];
const loops: ChildProcess[] = [];

/** A node loop in `cwd`, as fast as it goes; it exits when the test ends. */
function loop(cwd: string, body: string): ChildProcess {
  const child = spawn(process.execPath, ["-e", `const fs = require("fs"); let i = 0;\n${body}`], {
    cwd,
    stdio: "ignore",
  });
  loops.push(child);
  return child;
}
/** `a/b` made, then `a` renamed away and a link to the hidden folder put in its place, again and again. */
const swapLoop = () =>
  loop(
    ws,
    `for (;;) { try { fs.mkdirSync("a"); fs.mkdirSync("a/b"); fs.renameSync("a", "x"); fs.symlinkSync(${JSON.stringify(hidden)}, "a"); } catch {}
      fs.rmSync("a", { force: true }); fs.rmSync("x", { recursive: true, force: true }); }`,
  );
/** What the other side writes in its folder: a new secret name every 5 ms. */
const secretWriter = () =>
  loop(
    join(hidden, "b"),
    `setInterval(() => { fs.writeFileSync("secret-" + ++i, ""); fs.rmSync("secret-" + (i - 20), { force: true }); }, 5);`,
  );
const leaked = () => announced.filter((p) => p.includes("secret-"));
const watchServers = () => {
  try {
    return execFileSync("pgrep", ["-f", `watch-server.*${ws}`])
      .toString()
      .trim()
      .split("\n")
      .map(Number);
  } catch {
    return [];
  }
};

beforeEach(async () => {
  // Not under /tmp: the sandbox has a /tmp of its own, which would hide the folder anyway.
  base = await realpath(await mkdtemp(join(existsSync("/var/tmp") ? "/var/tmp" : tmpdir(), "quiver-watch-escape-")));
  ws = join(base, "ws");
  hidden = join(base, "hidden");
  await mkdir(ws);
  await mkdir(join(hidden, "b"), { recursive: true });
  announced = [];
});
afterEach(async () => {
  for (const child of loops.splice(0)) child.kill("SIGKILL");
  workspace?.dispose();
  await helpers?.dispose();
  helpers = undefined;
  await rm(base, { recursive: true, force: true });
});

async function open(sandboxed: boolean): Promise<void> {
  workspace = await Workspace.open(ws, { debounceMs: 20 });
  if (sandboxed) {
    helpers = helperSandbox(sandbox, { workspace: workspace.root, hide: [hidden] });
    workspace.helpers.useSandbox(helpers.wrap);
  }
  expect(await workspace.watching()).toBe(true);
  workspace.onChange((paths) => announced.push(...paths));
}

describe("a folder swapped for a link while the watcher adds its watch", () => {
  it("reaches the hidden folder when the watcher runs in the runner (why it moved into the sandbox)", async () => {
    await open(false);
    swapLoop();
    secretWriter();
    await vi.waitFor(() => expect(leaked().length).toBeGreaterThan(0), { timeout: 30_000, interval: 100 });
    expect(leaked()[0]).toMatch(/^a\/b\/secret-\d+$/);
  });

  it.skipIf(!sandbox.available)(
    "never reaches it from the sandbox, and the workspace's own changes still come",
    async () => {
      await open(true);
      expect(watchServers().length).toBeGreaterThan(0);
      swapLoop();
      secretWriter();
      await new Promise((r) => setTimeout(r, 6_000));
      expect(leaked()).toEqual([]);
      // The watcher was live all along: it saw the loop's own folders.
      expect(announced.some((p) => p === "a" || p === "x")).toBe(true);
    },
  );
});

describe.skipIf(!sandbox.available)("the watch server in the sandbox", () => {
  it("killed, is started again, says track was lost, and reports changes again", async () => {
    await writeFile(join(ws, "top.txt"), "");
    await open(true);
    const first = watchServers();
    for (const pid of first) process.kill(pid, "SIGKILL");
    // Lost: every top-level entry is announced once the new server listens.
    await vi.waitFor(() => expect(announced).toContain("top.txt"), { timeout: 20_000 });
    expect(watchServers().some((pid) => !first.includes(pid))).toBe(true);
    await writeFile(join(ws, "after.txt"), "");
    await vi.waitFor(() => expect(announced).toContain("after.txt"), { timeout: 10_000 });
  });

  it("ends with the workspace", async () => {
    await open(true);
    expect(watchServers().length).toBeGreaterThan(0);
    workspace.dispose();
    await vi.waitFor(() => expect(watchServers()).toEqual([]), { timeout: 5_000 });
  });
});
