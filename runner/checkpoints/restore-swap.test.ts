// A restore's staged file swapped after it was checked and before it is moved into place: the
// stage folder lies in the workspace, so a command left running can watch it (inotify) and swap
// file 0 for a FIFO the moment the check has closed it. Moving it into place opened it blocking,
// on the runner's loop: every workspace of the runner froze until the agent opened the FIFO. Now
// the restore goes on at once and says the file could not be restored; a link swapped in is not
// followed either. A tree planted in the stage folder (20,000 folders deep, past the runner's
// descriptors for a recursive rm -r) goes with the folder, a slice at a time, its link out not
// followed. A real workspace, the runner's real checkpoint ops, a real racing process.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { OpContext } from "../ops";
import { longestStall } from "../testing/event-loop";
import { Workspace } from "../workspace/workspace";
import { checkpointOps } from "./ops";

// Watches the root for the stage folder, then swaps staged file 0 once it has been opened and
// closed (the check), and prints what it did. A FIFO is let go (opened for writing) after 20 s.
// "tree": moves the folder `target` into the stage folder as soon as it is made.
const RACER = String.raw`
import ctypes, os, struct, sys, time
ws, kind, target = sys.argv[1], sys.argv[2], sys.argv[3]
libc = ctypes.CDLL("libc.so.6", use_errno=True)
fd = libc.inotify_init()
libc.inotify_add_watch(fd, ws.encode(), 0x100)
stage = stage_wd = None
print("ready", flush=True)
while True:
    buf = os.read(fd, 65536); i = 0
    while i < len(buf):
        wd, mask, cookie, ln = struct.unpack_from("iIII", buf, i)
        name = buf[i+16:i+16+ln].rstrip(b"\0").decode(); i += 16 + ln
        if stage is None and mask & 0x100 and name.startswith(".quiver-restore-"):
            stage = os.path.join(ws, name)
            if kind == "tree":
                os.rename(target, os.path.join(stage, "deep"))
                print("planted", flush=True)
                sys.exit(0)
            stage_wd = libc.inotify_add_watch(fd, stage.encode(), 0x10)
        elif wd == stage_wd and mask & 0x10 and name == "0":
            path = os.path.join(stage, "0")
            os.unlink(path)
            if kind == "fifo": os.mkfifo(path)
            else: os.symlink(target, path)
            print("swapped", flush=True)
            if kind == "fifo":
                time.sleep(20)
                os.close(os.open(path, os.O_WRONLY))
            sys.exit(0)
`;

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const clean of cleanups.splice(0).reverse()) clean();
});

async function setUp() {
  const base = mkdtempSync(join(tmpdir(), "quiver-restore-swap-"));
  // rm -r of the system: node's own gives up on a tree deeper than PATH_MAX left by a failed test.
  cleanups.push(() => execFileSync("rm", ["-rf", base]));
  const before = process.env.QUIVER_CHECKPOINT_DIR;
  process.env.QUIVER_CHECKPOINT_DIR = join(base, "shadows");
  cleanups.push(() =>
    before === undefined ? delete process.env.QUIVER_CHECKPOINT_DIR : (process.env.QUIVER_CHECKPOINT_DIR = before),
  );
  const dir = join(base, "ws");
  mkdirSync(dir);
  writeFileSync(join(base, "outside.txt"), "OUTSIDE THE WORKSPACE\n");
  const ws = await Workspace.open(dir, { watch: false });
  cleanups.push(() => ws.dispose());
  const ctx = {
    sessionId: "s1",
    workspace: ws,
    signal: new AbortController().signal,
    deadline: Date.now() + 120_000,
    progress() {},
    filesChanged() {},
  } as unknown as OpContext;
  const run = (op: string, input: unknown) => checkpointOps[op].run(checkpointOps[op].input.parse(input), ctx);
  writeFileSync(join(dir, "a.txt"), "v1\n");
  const first = ((await run("checkpoint.create", {})).meta as { commit: string }).commit;
  writeFileSync(join(dir, "a.txt"), "v2\n");
  return { base, dir, first, run };
}

function racer(dir: string, kind: "fifo" | "link" | "tree", target: string): { child: ChildProcess; out(): string } {
  const child = spawn("python3", ["-c", RACER, dir, kind, target], { stdio: ["ignore", "pipe", "inherit"] });
  cleanups.push(() => child.kill("SIGKILL"));
  let out = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  return { child, out: () => out };
}

const until = async (ok: () => boolean) => {
  while (!ok()) await new Promise((r) => setTimeout(r, 20));
};

describe("a staged file swapped during a restore", () => {
  it("for a FIFO: the restore goes on at once, the runner's loop is never held, the file is reported", async () => {
    const { dir, first, run } = await setUp();
    const r = racer(dir, "fifo", "");
    await until(() => r.out().includes("ready"));
    // The longest the loop went without running a 20 ms timer, during the restore.
    let last = Date.now();
    let held = 0;
    const tick = setInterval(() => {
      held = Math.max(held, Date.now() - last);
      last = Date.now();
    }, 20);
    const started = Date.now();
    const restored = await run("checkpoint.restore", { to: first, dryRun: false, keepPersonEdits: false });
    clearInterval(tick);
    expect(r.out()).toContain("swapped");
    // Released only after 20 s: a restore that waited for the FIFO took that long.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(held).toBeLessThan(10_000);
    expect(JSON.stringify(restored)).toMatch(/a\.txt.*replaced while restoring/);
  }, 60_000);

  it("for a link out of the workspace: it is not followed, and nothing outside is read into the workspace", async () => {
    const { base, dir, first, run } = await setUp();
    const r = racer(dir, "link", join(base, "outside.txt"));
    await until(() => r.out().includes("ready"));
    const restored = await run("checkpoint.restore", { to: first, dryRun: false, keepPersonEdits: false });
    expect(r.out()).toContain("swapped");
    expect(readFileSync(join(dir, "a.txt"), "utf8")).not.toContain("OUTSIDE");
    expect(JSON.stringify(restored)).toMatch(/a\.txt/);
  }, 60_000);
});

describe("a tree planted in the stage folder during a restore", () => {
  it("goes with the folder, its link out not followed, the runner's loop turning", async () => {
    const { base, dir, first, run } = await setUp();
    // Built outside first (one rename plants it): 20,000 levels take python a few seconds.
    const py = [
      "import os, sys",
      'os.mkdir("tree"); os.chdir("tree")',
      "for i in range(20000):",
      '  os.mkdir("d"); os.chdir("d")',
      'os.symlink(sys.argv[1], "out")',
    ].join("\n");
    execFileSync("python3", ["-c", py, join(base, "outside.txt")], { cwd: base });
    const r = racer(dir, "tree", join(base, "tree"));
    await until(() => r.out().includes("ready"));
    const { value: restored, stallMs } = await longestStall(() =>
      run("checkpoint.restore", { to: first, dryRun: false, keepPersonEdits: false }),
    );
    expect(r.out()).toContain("planted");
    expect(restored.ok, restored.output).toBe(true);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("v1\n");
    expect(readdirSync(dir).filter((n) => n.startsWith(".quiver-restore-"))).toEqual([]);
    expect(readFileSync(join(base, "outside.txt"), "utf8")).toBe("OUTSIDE THE WORKSPACE\n");
    // Not 250 ms: two test files at once on two cores stall any code a few hundred ms.
    expect(stallMs).toBeLessThan(1_000);
  }, 120_000);
});
