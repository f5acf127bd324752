// fs-at on a real temp workspace: links out refused with a clear error whatever their spelling,
// links inside followed, `..`, absolute paths, NUL bytes, long names, paths deeper than PATH_MAX,
// link loops, a planted FIFO, .git, and no descriptor left open after any of it.
import { execFileSync } from "node:child_process";
import { closeSync, constants, fstatSync, openSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WorkspaceFs } from "./index";

let base: string;
let root: string;
let files: WorkspaceFs;
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "quiver-fsat-")));
  root = join(base, "ws");
  await mkdir(join(root, "a", "b"), { recursive: true });
  await writeFile(join(root, "a", "b", "f.txt"), "inside\n");
  await mkdir(join(base, "out"));
  await writeFile(join(base, "out", "secret"), "SECRET\n");
  await mkdir(`${root}-evil`);
  await writeFile(`${root}-evil/secret`, "SECRET\n");
  files = WorkspaceFs.open(root);
});
afterEach(async () => {
  files.close();
  await rm(base, { recursive: true, force: true });
  await rm(`${root}-evil`, { recursive: true, force: true });
});

const read = async (p: string) => {
  try {
    const r = await files.readFile(p, { follow: true });
    return r.kind === "file" ? r.data.toString() : r.kind;
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
};

describe("reads", () => {
  it("refuses every spelling of a way out, saying why", async () => {
    await symlink("../out", join(root, "rel-out"));
    await symlink(join(base, "out"), join(root, "abs-out"));
    await symlink(join(base, "out", "secret"), join(root, "file-out"));
    await symlink("../../..", join(root, "a", "up"));
    await symlink("rel-out", join(root, "chain-out"));
    await symlink(`${root}-evil/secret`, join(root, "sibling"));
    await symlink("..", join(root, "dotdot"));
    const cases: Array<[string, RegExp]> = [
      ["../out/secret", /is outside the workspace/],
      ["a/../../out/secret", /is outside the workspace/],
      ["./../out/secret", /is outside the workspace/],
      [join(base, "out", "secret"), /is outside the workspace/],
      [`${root}-evil/secret`, /is outside the workspace/],
      ["rel-out/secret", /leads outside the workspace through a symlink/],
      ["abs-out/secret", /leads outside the workspace through a symlink/],
      ["chain-out/secret", /leads outside the workspace through a symlink/],
      ["a/up/out/secret", /leads outside the workspace through a symlink/],
      ["dotdot/out/secret", /leads outside the workspace through a symlink/],
      ["file-out", /is a symbolic link pointing outside the workspace/],
      ["sibling", /is a symbolic link pointing outside the workspace/],
      ["a\0b", /without NUL bytes/],
      [`${"x".repeat(256)}/f`, /has a name that is too long/],
    ];
    for (const [p, why] of cases) expect(await read(p), p.slice(0, 60)).toMatch(why);
  });

  it("follows links that stay inside, and reads absolute paths inside", async () => {
    await symlink("a/b", join(root, "rel-in"));
    await symlink(join(root, "a"), join(root, "abs-in"));
    await symlink("../b/f.txt", join(root, "a", "b", "up-in"));
    await symlink("rel-in", join(root, "chain-in"));
    for (const p of [
      "a/b/f.txt",
      "rel-in/f.txt",
      "abs-in/b/f.txt",
      "a/b/up-in",
      "chain-in/f.txt",
      join(root, "a/b/f.txt"),
      "a/./b/../b/f.txt",
    ]) {
      expect(await read(p), p).toBe("inside\n");
    }
    expect(files.lstat("rel-in")?.stats.isSymbolicLink()).toBe(true);
    expect(files.stat("rel-in")?.stats.isDirectory()).toBe(true);
  });

  it("stops a link loop, reads a path deeper than PATH_MAX, and does not hang on a FIFO", async () => {
    await symlink("loop2", join(root, "loop1"));
    await symlink("loop1", join(root, "loop2"));
    expect(await read("loop1/x")).toMatch(/too many levels of symbolic links/);
    const deep = Array.from({ length: 40 }, (_, i) => `${"d".repeat(120)}${i}`);
    expect(files.mkdir(deep.join("/")).created).toHaveLength(40);
    await files.writeFile(`${deep.join("/")}/deep.txt`, "deep\n");
    expect(deep.join("/").length).toBeGreaterThan(4096);
    expect(await read(`${deep.join("/")}/deep.txt`)).toBe("deep\n");
    // rm -r by name cannot remove it (its paths pass PATH_MAX); by descriptor it can.
    await files.removeTree(deep[0]);
    execFileSync("mkfifo", [join(root, "fifo")]);
    expect(await read("fifo")).toBe("other");
  });
});

describe("writes", () => {
  it("refuse .git (also through a link), the root, and links out; write through links inside", async () => {
    await mkdir(join(root, ".git"));
    await symlink(".git", join(root, "g"));
    await symlink("../out", join(root, "o"));
    await symlink("a/b", join(root, "in"));
    for (const [p, why] of [
      [".git/config", /inside .git/],
      ["g/config", /inside .git/],
      ["a/.git/x", /inside .git/],
      ["", /workspace root itself/],
      [".", /workspace root itself/],
      ["o/new", /leads outside the workspace through a symlink/],
    ] as const) {
      await expect(files.writeFile(p, "x"), p).rejects.toThrow(why);
    }
    expect(await readdir(join(root, ".git"))).toEqual([]);
    expect(await readdir(join(base, "out"))).toEqual(["secret"]);
    expect(await files.writeFile("in/new.txt", "n")).toEqual({ rel: "a/b/new.txt", created: [] });
    expect(await files.writeFile("x/y/z.txt", "n")).toEqual({ rel: "x/y/z.txt", created: ["x", "x/y"] });
  });

  it("replaces a link at the last component instead of writing through it, and rm -r removes links, not targets", async () => {
    await symlink(join(base, "out", "secret"), join(root, "a", "lnk"));
    await files.writeFile("a/lnk", "mine\n");
    expect(await readFile(join(base, "out", "secret"), "utf8")).toBe("SECRET\n");
    expect(await readFile(join(root, "a", "lnk"), "utf8")).toBe("mine\n");
    await symlink(join(base, "out"), join(root, "a", "b", "out-link"));
    await files.removeTree("a");
    expect(await readdir(root)).toEqual([]);
    expect(await readdir(join(base, "out"))).toEqual(["secret"]);
  });
});

it("leaves no descriptor open, whatever the outcome", async () => {
  await symlink("../out", join(root, "o"));
  const count = async () => (await readdir("/proc/self/fd")).length;
  const before = await count();
  for (let i = 0; i < 300; i++) {
    await read("a/b/f.txt");
    await read("o/secret");
    await read("missing/x");
    await files.writeFile(`w/${i % 3}.txt`, "x");
    await files.writeFile(".git/x", "x").catch(() => {});
    await files.listSmallest("a", 10, ".gitignore");
    files.mkdir(`m/${i}`);
    files.rename(`m/${i}`, `m/r${i}`);
    files.lstat("a/b");
  }
  await files.removeTree("m");
  expect(await count()).toBe(before);
});

describe("a walk's descriptors", () => {
  it("are closed once: a second close leaves alone the file that took their numbers", async () => {
    const w = files.walk("a/b/f.txt", { open: constants.O_RDONLY });
    const held = [w.fd!, w.dir];
    w.close();
    // The lowest free numbers are the walk's: the next opens take them.
    const others = held.map(() => openSync(join(base, "out", "secret"), "r"));
    try {
      expect(others.sort()).toEqual([...held].sort());
      w.close();
      for (const fd of others) expect(fstatSync(fd).isFile()).toBe(true);
    } finally {
      for (const fd of others) closeSync(fd);
    }
  });
});
