// Inotify instances are counted per user across every user namespace (the host's
// fs.inotify.max_user_instances, 128 by default), so a command in one workspace's sandbox can hold
// them all. Another workspace's watch server started meanwhile then never says ready:
// @parcel/watcher blocks for good when it cannot make an inotify instance. It must be killed and
// started again, so the watcher comes back once the command lets go, instead of staying deaf.
// Real sandboxes: the agent's command holds the instances in workspace A's warm sandbox, B's
// watch server runs in B's helpers' sandbox. All of it runs in a user namespace of its own whose
// limit is 16 instances, so the host's own are never exhausted: a watcher of a test running
// beside this one would block for good too.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { findOnPath, sandboxInfo } from "../exec/sandbox";
import { REPO_ROOT } from "../testing/child";

const sandbox = sandboxInfo("auto");
const unshare = findOnPath("unshare");
const LIMITED = 'echo 16 > /proc/sys/fs/inotify/max_user_instances && exec "$@"';
const isolated =
  !!unshare && spawnSync(unshare, ["--user", "--map-root-user", "--", "sh", "-c", LIMITED, "sh", "true"]).status === 0;

// The scenario, run in that namespace: prints `held N`, then `heard` once B's watcher hears B again.
const SCENARIO = String.raw`
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { helperSandbox } from "./runner/exec/helper-sandbox.ts";
import { sandboxInfo } from "./runner/exec/sandbox.ts";
import { ShellService } from "./runner/exec/shell.ts";
import { opContext } from "./runner/testing/exec.ts";
import { watchServers } from "./runner/testing/watch-servers.ts";
import { Workspace } from "./runner/workspace/workspace.ts";

const base = process.argv[2];
const sandbox = sandboxInfo("auto");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
mkdirSync(join(base, "a"));
mkdirSync(join(base, "b"));
const a = await Workspace.open(join(base, "a"), { watch: false });
const shell = new ShellService({ sandbox, env: { PATH: process.env.PATH!, HOME: "/root" }, allowNetwork: false });
// Makes inotify instances until the kernel refuses, and holds them until "release" exists.
const hold = 'python3 -c "\nimport ctypes, os, time\nlibc = ctypes.CDLL(None, use_errno=True)\nn = 0\n' +
  "while libc.inotify_init1(0) >= 0: n += 1\nprint('held', n, flush=True)\n" +
  "while not os.path.exists('release'): time.sleep(0.05)\n" + '"';
const held = await shell.run({ command: hold, timeout_ms: 60_000, yield_time_ms: 3_000 }, opContext(a));
console.log(held.output.trim(), held.meta.running ? "running" : "ended");

const b = await Workspace.open(join(base, "b"), { watch: "when-served", debounceMs: 20 });
const helpers = helperSandbox(sandbox, { workspace: b.root, hide: [] });
b.helpers.useSandbox(helpers.wrap);
const announced: string[] = [];
b.onChange((paths) => announced.push(...paths));
b.watchWhenServed();
for (let i = 0; i < 100 && watchServers(b.root).length === 0; i++) await sleep(100);
await sleep(1_000);
console.log("server", watchServers(b.root).length > 0, "announced", announced.length);
// The command lets go; B's watcher must hear B's changes again.
writeFileSync(join(base, "a", "release"), "");
for (let n = 0; n < 120 && !announced.some((p) => p.startsWith("after-")); n++) {
  writeFileSync(join(b.root, "after-" + n), "");
  await sleep(500);
}
console.log(announced.some((p) => p.startsWith("after-")) ? "heard" : "deaf");
b.dispose();
await helpers.dispose();
await shell.dispose();
process.exit(0);
`;

let base: string | undefined;
afterEach(async () => {
  if (base) await rm(base, { recursive: true, force: true });
});

it.runIf(sandbox.available && isolated)(
  "a watch server started while another sandbox holds every inotify instance comes back once they are let go",
  async () => {
    // Not under /tmp: the sandbox has a /tmp of its own.
    base = await realpath(await mkdtemp(join(existsSync("/var/tmp") ? "/var/tmp" : tmpdir(), "quiver-inotify-")));
    const file = join(base, "scenario.mts");
    writeFileSync(file, SCENARIO.replaceAll('from "./runner/', `from "${join(REPO_ROOT, "runner")}/`));
    const argv = ["--user", "--map-root-user", "--", "sh", "-c", LIMITED, "sh"];
    const child = spawn(unshare!, [...argv, process.execPath, "--import", "tsx", file, base], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 100_000);
    await new Promise((r) => child.once("close", r));
    clearTimeout(timer);
    expect(out).toMatch(/held \d+ running/);
    expect(out).toContain("server true announced 0");
    expect(out).toContain("heard");
  },
  120_000,
);
