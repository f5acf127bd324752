// eachFileUnder on real temp folders: it stops at its entry and depth limits and says so, never
// follows a link (the top folder's own included), does not block on a FIFO swapped in for a
// file, and leaves no descriptor open whichever way it ends.
import { execFileSync } from "node:child_process";
import {
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readdirSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eachFileUnder, type UnderLimits } from "./files-under";

let root: string;
let rootFd: number;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "quiver-files-under-")));
  rootFd = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
});
afterEach(async () => {
  closeSync(rootFd);
  await rm(root, { recursive: true, force: true });
});

const openFds = () => readdirSync("/proc/self/fd").length;
const wide: UnderLimits = { maxEntries: 1_000_000, maxDepth: 64 };

/** Every file visited under `name`, with its bytes (or null), and whether the walk was whole. */
async function visitAll(name: string, limits = wide, onVisit?: () => void) {
  const seen: [string, string | null][] = [];
  const { complete } = await eachFileUnder(rootFd, name, limits, async (path, read) => {
    onVisit?.();
    seen.push([path, (await read(1024))?.toString() ?? null]);
  });
  return { seen: seen.sort(), complete };
}

describe("eachFileUnder", () => {
  it("reads no more than maxEntries entries of a large folder, and says it stopped", async () => {
    mkdirSync(join(root, "many"));
    for (let i = 0; i < 2_000; i++) writeFileSync(join(root, "many", `f${i}`), "");
    const before = openFds();
    const { seen, complete } = await visitAll("many", { maxEntries: 100, maxDepth: 64 });
    expect(seen).toHaveLength(100);
    expect(complete).toBe(false);
    expect(openFds()).toBe(before);
    expect((await visitAll("many")).seen).toHaveLength(2_000);
  });

  it("enters no more than maxDepth folders, each through its parent's descriptor", async () => {
    // Deeper than PATH_MAX allows by name: made, as walked, relative to each folder's descriptor.
    let fd = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY);
    for (let i = 0; i < 1_000; i++) {
      writeFileSync(`/proc/self/fd/${fd}/f.txt`, `${i}\n`);
      mkdirSync(`/proc/self/fd/${fd}/${"d".repeat(100)}`);
      const next = openSync(`/proc/self/fd/${fd}/${"d".repeat(100)}`, constants.O_RDONLY | constants.O_DIRECTORY);
      closeSync(fd);
      fd = next;
    }
    closeSync(fd);
    const before = openFds();
    const { seen, complete } = await visitAll("d".repeat(100), { maxEntries: 1_000_000, maxDepth: 10 });
    expect(seen.map(([, text]) => text).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `${i + 1}\n`).sort());
    expect(complete).toBe(false);
    expect(openFds()).toBe(before);
    execFileSync("rm", ["-rf", join(root, "d".repeat(100))]);
  });

  it("follows no link, to a folder or a file, nor a top folder that is one", async () => {
    mkdirSync(join(root, "out"));
    writeFileSync(join(root, "out", "secret"), "SECRET\n");
    mkdirSync(join(root, "top"));
    writeFileSync(join(root, "top", "a.txt"), "a\n");
    symlinkSync(join(root, "out"), join(root, "top", "dir-link"));
    symlinkSync(join(root, "out", "secret"), join(root, "top", "file-link"));
    symlinkSync("out", join(root, "top-link"));
    expect(await visitAll("top")).toEqual({ seen: [["a.txt", "a\n"]], complete: true });
    expect(await visitAll("top-link")).toEqual({ seen: [], complete: true });
    expect(await visitAll("missing")).toEqual({ seen: [], complete: true });
  });

  it("skips a FIFO, and one swapped in for a file after the listing reads as nothing, without blocking", async () => {
    mkdirSync(join(root, "top"));
    execFileSync("mkfifo", [join(root, "top", "pipe")]);
    for (const n of ["a", "b", "c"]) writeFileSync(join(root, "top", n), `${n}\n`);
    let first = true;
    const { seen } = await visitAll("top", wide, () => {
      if (!first) return;
      first = false;
      // The listing is already buffered: the other two names still read as files.
      for (const n of ["a", "b", "c"]) {
        const p = join(root, "top", n);
        unlinkSync(p);
        execFileSync("mkfifo", [p]);
      }
    });
    expect(seen).toHaveLength(3);
    expect(seen.every(([, text]) => text === null)).toBe(true);
  });
});
