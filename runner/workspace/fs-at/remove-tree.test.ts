// WorkspaceFs.removeTree against trees the agent shapes, on real temp folders: a chain of
// folders deeper than the runner has descriptors, a folder of very many names, links out and a
// FIFO inside. Each goes whole, the link's target stays, and the runner's event loop, which
// every workspace shares, keeps turning. The recursive rm -r it replaced took a stack frame and
// a descriptor a level (a stack overflow at this depth) and held the loop for the whole removal.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { longestStall } from "../../testing/event-loop";
import { WorkspaceFs } from "./index";
import { MAX_REMOVE_DEPTH } from "./remove";

/** As the threat: a recursion overflows its stack, and it is as many descriptors as ulimit -n gives here. */
const DEPTH = 20_000;
/**
 * The longest the loop may go unturned: far under the old whole-removal hold (2.6–6 s for 100,000
 * names here), over what the machine's own load adds to any code (two test files at once on two
 * cores: a few hundred milliseconds).
 */
const MAX_STALL_MS = 1_000;

let base: string;
let root: string;
let outside: string;
let files: WorkspaceFs;
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "quiver-remove-tree-")));
  root = join(base, "ws");
  outside = join(base, "outside");
  mkdirSync(join(outside, "sub"), { recursive: true });
  writeFileSync(join(outside, "sub", "secret"), "secret\n");
  mkdirSync(root);
  files = WorkspaceFs.open(root);
});
// rm -r of the system: node's own gives up on a tree deeper than PATH_MAX left by a failed test.
afterEach(() => {
  files.close();
  execFileSync("rm", ["-rf", base]);
});

/**
 * `root/name`, a chain of `depth` folders with a file at each level, and at the bottom a link to
 * `outside/sub`, a link to its file and a FIFO. Python: the shell's cd gives up past PATH_MAX.
 */
function chain(name: string, depth: number): void {
  const py = [
    "import os, sys",
    `os.mkdir(${JSON.stringify(name)}); os.chdir(${JSON.stringify(name)})`,
    `for i in range(${depth}):`,
    '  open("f", "w").close(); os.mkdir("d"); os.chdir("d")',
    'os.symlink(sys.argv[1], "out"); os.symlink(sys.argv[1] + "/secret", "out-file"); os.mkfifo("fifo")',
  ].join("\n");
  execFileSync("python3", ["-c", py, join(outside, "sub")], { cwd: root });
}

/** The most descriptors held above `before` while `work` ran (sampled every millisecond). */
async function mostDescriptors<T>(work: () => Promise<T>): Promise<{ value: T; more: number }> {
  const open = () => readdirSync("/proc/self/fd").length;
  const before = open();
  let most = before;
  const probe = setInterval(() => (most = Math.max(most, open())), 1);
  try {
    const value = await work();
    return { value, more: most - before };
  } finally {
    clearInterval(probe);
  }
}

describe("removeTree of a tree the agent shaped", () => {
  it(`a chain ${DEPTH} folders deep, links out and a FIFO at its bottom: all gone, the targets kept, the loop turning`, async () => {
    chain("deep", DEPTH);
    writeFileSync(join(root, "keep.txt"), "kept\n");
    const { value: stall, more } = await mostDescriptors(() => longestStall(() => files.removeTree("deep")));
    expect(readdirSync(root)).toEqual(["keep.txt"]);
    expect(readFileSync(join(outside, "sub", "secret"), "utf8")).toBe("secret\n");
    // Two a level (the folder and its listing), at most MAX_REMOVE_DEPTH levels at once.
    expect(more).toBeLessThanOrEqual(2 * MAX_REMOVE_DEPTH + 8);
    expect(stall.stallMs).toBeLessThan(MAX_STALL_MS);
  }, 120_000);

  it("a folder of 100,000 names goes a slice at a time, a link in it removed, not followed", async () => {
    execFileSync(
      "python3",
      ["-c", 'import os\nos.mkdir("wide")\nfor i in range(100000): open(f"wide/{i}", "w").close()'],
      {
        cwd: root,
      },
    );
    symlinkSync(outside, join(root, "wide", "out"));
    const { stallMs } = await longestStall(() => files.removeTree("wide"));
    expect(existsSync(join(root, "wide"))).toBe(false);
    expect(readdirSync(join(outside, "sub"))).toEqual(["secret"]);
    expect(stallMs).toBeLessThan(MAX_STALL_MS);
  }, 120_000);

  it("a link in place of the folder loses the link, never its target; a missing path is an error", async () => {
    symlinkSync(outside, join(root, "swapped"));
    await files.removeTree("swapped");
    expect(readdirSync(root)).toEqual([]);
    expect(readdirSync(join(outside, "sub"))).toEqual(["secret"]);
    await expect(files.removeTree("swapped")).rejects.toMatchObject({ code: "ENOENT" });
    await expect(files.removeTree("missing/deeper")).rejects.toThrow(/does not exist/);
  });

  it("outlives the workspace's close: the removal holds a descriptor of its own", async () => {
    chain("deep", 1_000);
    const removing = files.removeTree("deep");
    files.close();
    await removing;
    expect(readdirSync(root)).toEqual([]);
    expect(readdirSync(join(outside, "sub"))).toEqual(["secret"]);
  }, 60_000);
});
