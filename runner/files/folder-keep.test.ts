// A folder deleted or moved by the person outside git, when the agent made it hostile: huge,
// deep, with a FIFO or a link to a folder outside in it. The walk that keeps its files for
// Changes stops at its limits and says so, reads nothing outside, never blocks, and Discard still
// puts back every file it kept.
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdirSync, openSync, readdirSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PERSON_FILE_OPS, PersonChanges } from "../../server/protocol/person-file-ops";
import { opContext, tempWorkspace } from "../testing/exec";
import { personFileOps } from "./person";

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(async () => {
  // A chain deeper than PATH_MAX: rm -r by name cannot remove it.
  execFileSync("rm", ["-rf", ws.dir]);
  await ws.cleanup();
});

type Op = "ide_write" | "ide_rename" | "ide_delete" | "ide_changes" | "ide_original";
const person = (op: Op, input: unknown) =>
  personFileOps[op].run(PERSON_FILE_OPS[op].parse(input), opContext(ws.workspace));
const changed = async () => PersonChanges.parse((await person("ide_changes", {})).meta).files.map((f) => f.path);
/** Discard as the panel does it: the earlier version written back. */
async function discard(path: string): Promise<void> {
  const original = await person("ide_original", { path });
  expect(original.ok).toBe(true);
  expect((await person("ide_write", { path, content: original.output })).ok).toBe(true);
}

describe("keeping a deleted or moved folder's files for Changes", () => {
  it("a folder of many files: the walk stops at maxEntries, past maxFiles it only counts, and Discard puts back what it kept", async () => {
    await mkdir(join(ws.dir, "many"));
    for (let i = 0; i < 1_000; i++) await writeFile(join(ws.dir, `many/f${i}.txt`), `${i}\n`);
    const limits = { maxFiles: 3, maxBytes: 1 << 20, maxEntries: 50 };
    expect(await ws.workspace.diff.keepFolder("many", undefined, limits)).toEqual({ files: 47, more: true });
    await ws.workspace.files.removeTreeAtomic("many");
    const kept = await changed();
    expect(kept).toHaveLength(3);
    for (const path of kept) await discard(path);
    expect(await changed()).toEqual([]);
    for (const path of kept) expect(await readFile(join(ws.dir, path), "utf8")).toBe(`${path.slice(6, -4)}\n`);
  });

  it("the count of an unfinished walk is a floor, and the note says so", async () => {
    await mkdir(join(ws.dir, "huge"));
    // Past the default limits: 100,000 entries looked at, of which 2,000 files kept.
    execFileSync("sh", ["-c", "seq 1 100001 | xargs touch"], { cwd: join(ws.dir, "huge") });
    expect(await person("ide_delete", { path: "huge" })).toMatchObject({
      ok: true,
      output: "deleted huge (at least 98000 of its files were too many to keep for Changes)",
    });
    expect(await changed()).toHaveLength(2_000);
  }, 120_000);

  it("a chain of 10,000 folders: deleted whole, its top files kept, no descriptor left open", async () => {
    await mkdir(join(ws.dir, "chain"));
    await writeFile(join(ws.dir, "chain/top.txt"), "top\n");
    let fd = openSync(join(ws.dir, "chain"), constants.O_RDONLY | constants.O_DIRECTORY);
    for (let i = 0; i < 10_000; i++) {
      mkdirSync(`/proc/self/fd/${fd}/d`);
      const next = openSync(`/proc/self/fd/${fd}/d`, constants.O_RDONLY | constants.O_DIRECTORY);
      closeSync(fd);
      fd = next;
    }
    writeFileSync(`/proc/self/fd/${fd}/bottom.txt`, "bottom\n");
    closeSync(fd);
    const fds = readdirSync("/proc/self/fd").length;
    expect(
      await ws.workspace.diff.keepFolder("chain", undefined, { maxFiles: 10, maxBytes: 1 << 20, maxDepth: 5 }),
    ).toEqual({ files: 0, more: true });
    expect(await person("ide_delete", { path: "chain" })).toMatchObject({
      ok: true,
      output:
        "deleted chain (it was too large or too deep to look through whole: some of its files may not be kept for Changes)",
    });
    expect(readdirSync("/proc/self/fd").length).toBe(fds);
    expect(await changed()).toEqual(["chain/top.txt"]);
    await discard("chain/top.txt");
    expect(await readFile(join(ws.dir, "chain/top.txt"), "utf8")).toBe("top\n");
  });

  it("a FIFO and a link to a folder outside: nothing outside read, no hang, the rest put back", async () => {
    const outside = await mkdtemp(join(tmpdir(), "quiver-outside-"));
    try {
      await writeFile(join(outside, "secret.txt"), "SECRET\n");
      await mkdir(join(ws.dir, "src/inner"), { recursive: true });
      await writeFile(join(ws.dir, "src/a.txt"), "a\n");
      await writeFile(join(ws.dir, "src/inner/b.txt"), "b\n");
      execFileSync("mkfifo", [join(ws.dir, "src/pipe")]);
      await symlink(outside, join(ws.dir, "src/out"));
      expect(await person("ide_rename", { from: "src", to: "lib" })).toMatchObject({
        ok: true,
        output: "renamed src to lib",
      });
      expect(await person("ide_delete", { path: "lib" })).toMatchObject({ ok: true, output: "deleted lib" });
      expect(await changed()).toEqual(["src/a.txt", "src/inner/b.txt"]);
      expect(await person("ide_original", { path: "src/out/secret.txt" })).toMatchObject({ meta: { existed: false } });
      for (const path of ["src/a.txt", "src/inner/b.txt"]) await discard(path);
      expect(await changed()).toEqual([]);
      expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("SECRET\n");
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it("a folder swapped for a link to another folder is not read through it", async () => {
    await mkdir(join(ws.dir, "real"));
    await writeFile(join(ws.dir, "real/x.txt"), "x\n");
    await symlink("real", join(ws.dir, "alias"));
    expect(await ws.workspace.diff.keepFolder("alias")).toEqual({ files: 0, more: false });
    await rm(join(ws.dir, "alias"));
    expect(await changed()).toEqual([]);
  });
});
