// The agent swaps a new folder for a link to a folder it may not see, in the instant between the
// folder's creation and the watcher's watch on a folder inside it: a watcher that adds watches by
// path then watches the hidden folder and announces the names made there as the workspace's own.
// Run with the runner's real sandbox, a real swap loop and a real hidden folder being written.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { helperSandbox, type HelperSandbox } from "../exec/helper-sandbox";
import { cgroupsUsable, DEFAULT_LIMITS, type Limits } from "../exec/limits";
import { sandboxCounts } from "../exec/ns-counts";
import { sandboxInfo } from "../exec/sandbox";
import { watchServerNode, watchServers as watchServersOf } from "../testing/watch-servers";
import { SandboxedWatch } from "./watch-sandboxed";
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
const watchServers = () => watchServersOf(ws);

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

async function open(sandboxed: boolean, limits?: Limits): Promise<void> {
  workspace = await Workspace.open(ws, { debounceMs: 20 });
  if (sandboxed) {
    helpers = helperSandbox(sandbox, { workspace: workspace.root, hide: [hidden], limits });
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

  it("runs under the commands' limits, in the helpers' cgroup where there is one", async () => {
    await open(true, { ...DEFAULT_LIMITS, cpuSeconds: 4321 });
    const pid = watchServerNode(ws);
    expect(readFileSync(`/proc/${pid}/limits`, "utf8")).toMatch(/Max cpu time\s+4321\s/);
    if (cgroupsUsable()) expect(readFileSync(`/proc/${pid}/cgroup`, "utf8")).toMatch(/quiver-\d+-helpers-/);
  });

  it("holds no more inotify watches than a sandbox's share of the host's (one per folder the agent makes)", async () => {
    await open(true);
    const pid = watchServerNode(ws)!;
    const read = () =>
      execFileSync("nsenter", [
        `--user=/proc/${pid}/ns/user`,
        "--preserve-credentials",
        "--",
        "cat",
        "/proc/sys/user/max_inotify_watches",
      ])
        .toString()
        .trim();
    await vi.waitFor(() => expect(Number(read())).toBe(sandboxCounts(0, false).max_inotify_watches), {
      timeout: 5_000,
    });
  });

  it("reaching the memory limit, is killed and started again while the runner goes on", async () => {
    workspace = await Workspace.open(ws, { watch: false });
    helpers = helperSandbox(sandbox, {
      workspace: workspace.root,
      hide: [],
      limits: { ...DEFAULT_LIMITS, memoryBytes: 4 * 1024 * 1024 },
    });
    workspace.helpers.useSandbox(helpers.wrap);
    const logged: string[] = [];
    const watch = new SandboxedWatch(
      workspace.root,
      workspace.helpers,
      { changed: () => undefined, lost: () => undefined },
      (l) => logged.push(l),
    );
    try {
      expect(await watch.ready).toBe(false);
      await vi.waitFor(() => expect(logged.length).toBeGreaterThanOrEqual(2), { timeout: 20_000 });
    } finally {
      watch.dispose();
    }
    expect(logged[0]).toMatch(
      /watch server of .* exited \((SIGKILL|SIGABRT|SIGTRAP|SIGSEGV|code \d+)\b.*again in 1 s$/,
    );
    expect(logged[1]).toMatch(/again in 2 s$/);
  });

  it("ends with the workspace", async () => {
    await open(true);
    expect(watchServers().length).toBeGreaterThan(0);
    workspace.dispose();
    await vi.waitFor(() => expect(watchServers()).toEqual([]), { timeout: 5_000 });
  });
});
