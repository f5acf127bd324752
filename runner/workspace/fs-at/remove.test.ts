// Removing big folders through descriptors on real temp folders: 40,000 files go without holding
// the event loop (the person's delete, the leftovers sweep), a link inside is removed and never
// followed, a folder deeper than PATH_MAX goes too, and an abort stops the removal between slices.
import { execFileSync } from "node:child_process";
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp, realpath } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { longestStall } from "../../testing/event-loop";
import { WorkspaceFs } from "./index";
import { MAX_REMOVE_DEPTH, removeEntrySliced } from "./remove";

let base: string;
let root: string;
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "quiver-remove-")));
  root = join(base, "ws");
  mkdirSync(root);
});
// rm -r of the system: node's own gives up on a tree deeper than PATH_MAX left by a failed test.
afterEach(() => execFileSync("rm", ["-rf", base]));

/** 40 folders of 1,000 empty files under `root/name`, made by one shell. */
function bigFolder(name: string): void {
  execFileSync(
    "sh",
    [
      "-c",
      `mkdir ${name} && cd ${name} && for i in $(seq 0 39); do mkdir d$i && (cd d$i && touch $(seq 1 1000)); done`,
    ],
    {
      cwd: root,
    },
  );
}

describe("removing a big folder", () => {
  it("the person's delete of 40,000 files leaves the event loop turning, and removes them all", async () => {
    bigFolder("node_modules");
    writeFileSync(join(root, "keep.txt"), "kept\n");
    const files = WorkspaceFs.open(root);
    try {
      const { stallMs } = await longestStall(() => files.removeTreeAtomic("node_modules"));
      // The synchronous rm -r held it 0.8–2.6 s on this machine.
      expect(stallMs).toBeLessThan(250);
      expect(readdirSync(root)).toEqual(["keep.txt"]);
    } finally {
      files.close();
    }
  }, 60_000);

  it("removes a link inside, never what it leads to; a tree deeper than PATH_MAX goes too", async () => {
    const outside = join(base, "outside");
    mkdirSync(join(outside, "sub"), { recursive: true });
    writeFileSync(join(outside, "sub", "secret"), "secret\n");
    mkdirSync(join(root, "doomed"));
    symlinkSync(outside, join(root, "doomed", "out"));
    symlinkSync(join(outside, "sub"), join(root, "doomed", "sub-link"));
    execFileSync(
      "sh",
      [
        "-c",
        // Python: the shell's cd and redirections give up past PATH_MAX.
        `python3 -c 'import os\nos.chdir("doomed")\nfor i in range(300):\n  os.mkdir("d" * 20); os.chdir("d" * 20)\nopen("f", "w").write("x")'`,
      ],
      {
        cwd: root,
      },
    );
    const dir = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      await removeEntrySliced(dir, "doomed");
    } finally {
      closeSync(dir);
    }
    expect(existsSync(join(root, "doomed"))).toBe(false);
    expect(readdirSync(join(outside, "sub"))).toEqual(["secret"]);
  });

  it("a tree 2,000 folders deep goes with at most MAX_REMOVE_DEPTH levels of descriptors held", async () => {
    execFileSync(
      "python3",
      [
        "-c",
        'import os\nos.chdir("deep")\nfor i in range(2000):\n  open("f", "w").write(str(i)); os.mkdir("d"); os.chdir("d")\nopen("last", "w").write("x")',
      ],
      { cwd: (mkdirSync(join(root, "deep")), root) },
    );
    const openFds = () => readdirSync("/proc/self/fd").length;
    const before = openFds();
    let most = before;
    const probe = setInterval(() => (most = Math.max(most, openFds())), 1);
    const dir = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      await removeEntrySliced(dir, "deep");
    } finally {
      clearInterval(probe);
      closeSync(dir);
    }
    expect(readdirSync(root)).toEqual([]);
    // Two a level (the folder and its listing); 4,000 for the whole depth.
    expect(most - before).toBeLessThanOrEqual(2 * MAX_REMOVE_DEPTH + 8);
    expect(most - before).toBeGreaterThan(MAX_REMOVE_DEPTH);
  }, 60_000);

  it("an aborted removal stops between slices and throws the abort", async () => {
    bigFolder("big");
    const dir = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
    const ctrl = new AbortController();
    try {
      const removing = removeEntrySliced(dir, "big", ctrl.signal);
      ctrl.abort(new Error("stopped"));
      await expect(removing).rejects.toThrow("stopped");
    } finally {
      closeSync(dir);
    }
    // Stopped early: most of it is still there.
    expect(readdirSync(join(root, "big")).length).toBeGreaterThan(30);
  }, 60_000);
});
