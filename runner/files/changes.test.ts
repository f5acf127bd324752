// The Changes panel's ops on a real workspace: in a git work tree (against HEAD, untracked files
// included) and outside git (against what the runner first saw), with each file's earlier version.
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PERSON_FILE_OPS, PersonChanges } from "../../server/protocol/person-file-ops";
import { opContext, tempWorkspace } from "../testing/exec";
import { Workspace } from "../workspace/workspace";
import { TEXT_DIFF_MAX_BYTES } from "../workspace/diff";
import { changedFiles } from "./changes";
import { writeFileOp } from "./edit";
import { readFileOp } from "./read";
import { personFileOps } from "./person";

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const run = (op: "ide_changes" | "ide_original", input: unknown) =>
  personFileOps[op]
    .run(PERSON_FILE_OPS[op].parse(input), opContext(ws.workspace))
    .catch((err: Error) => ({ ok: false, output: err.message, meta: undefined }));
const changes = async () => PersonChanges.parse((await run("ide_changes", {})).meta);
const git = (...args: string[]) =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd: ws.dir });

describe("the workspace's changes, file by file", () => {
  it("in a git work tree: modified, deleted, untracked and binary files, with HEAD's version of each", async () => {
    await writeFile(join(ws.dir, "keep.txt"), "same\n");
    await writeFile(join(ws.dir, "a.txt"), "one\ntwo\nthree\n");
    await writeFile(join(ws.dir, "gone.txt"), "bye\n");
    await writeFile(join(ws.dir, "with space.md"), "# t\n");
    git("init", "-q", "-b", "main");
    git("add", ".");
    git("commit", "-qm", "start");
    await writeFile(join(ws.dir, "a.txt"), "one\nTWO\nthree\nfour\n");
    await rm(join(ws.dir, "gone.txt"));
    await writeFile(join(ws.dir, "new.ts"), "export {};\n");
    await writeFile(join(ws.dir, "with space.md"), "# title\n");
    await writeFile(join(ws.dir, "blob.bin"), Buffer.from([0, 1, 2, 3]));

    expect(await changes()).toEqual({
      mode: "git",
      branch: "main",
      truncated: false,
      files: [
        { path: "a.txt", status: "modified", added: 2, removed: 1 },
        { path: "blob.bin", status: "added", added: 0, removed: 0, binary: true },
        { path: "gone.txt", status: "deleted", added: 0, removed: 1 },
        { path: "new.ts", status: "added", added: 1, removed: 0 },
        { path: "with space.md", status: "modified", added: 1, removed: 1 },
      ],
    });
    expect(await run("ide_original", { path: "a.txt" })).toMatchObject({
      ok: true,
      output: "one\ntwo\nthree\n",
      meta: { existed: true },
    });
    expect(await run("ide_original", { path: "gone.txt" })).toMatchObject({
      ok: true,
      output: "bye\n",
      meta: { existed: true },
    });
    expect(await run("ide_original", { path: "new.ts" })).toMatchObject({
      ok: true,
      output: "",
      meta: { existed: false },
    });
    expect(await run("ide_original", { path: "../outside.txt" })).toMatchObject({ ok: false });
  });

  it("outside git: what the runner's writes changed, against what each file held before", async () => {
    await writeFile(join(ws.dir, "a.txt"), "before\n");
    expect(await changes()).toEqual({ mode: "baseline", truncated: false, files: [] });
    // As the agent would: a file it overwrites is read first.
    await readFileOp.run({ path: "a.txt" }, opContext(ws.workspace));
    expect((await writeFileOp.run({ path: "a.txt", content: "after\n" }, opContext(ws.workspace))).ok).toBe(true);
    expect((await writeFileOp.run({ path: "b/new.txt", content: "x\ny\n" }, opContext(ws.workspace))).ok).toBe(true);
    expect((await changes()).files).toEqual([
      { path: "a.txt", status: "modified", added: 1, removed: 1 },
      { path: "b/new.txt", status: "added", added: 2, removed: 0 },
    ]);
    expect(await run("ide_original", { path: "a.txt" })).toMatchObject({
      ok: true,
      output: "before\n",
      meta: { existed: true },
    });
    expect(await run("ide_original", { path: "b/new.txt" })).toMatchObject({ ok: true, meta: { existed: false } });

    // The person's own saves, renames and deletes from the IDE count too.
    await writeFile(join(ws.dir, "mine.txt"), "v1\n");
    await writeFile(join(ws.dir, "old-name.txt"), "moved\n");
    await writeFile(join(ws.dir, "doomed.txt"), "bye\n");
    for (const [op, input] of [
      ["ide_write", { path: "mine.txt", content: "v2\n" }],
      ["ide_rename", { from: "old-name.txt", to: "new-name.txt" }],
      ["ide_delete", { path: "doomed.txt" }],
    ] as const) {
      expect(
        (
          await personFileOps[op].run(PERSON_FILE_OPS[op].parse(input), {
            ...opContext(ws.workspace),
            filesChanged: () => undefined,
          })
        ).ok,
      ).toBe(true);
    }
    expect((await changes()).files.map((f) => [f.path, f.status])).toEqual([
      ["a.txt", "modified"],
      ["b/new.txt", "added"],
      ["doomed.txt", "deleted"],
      ["mine.txt", "modified"],
      ["new-name.txt", "added"],
      ["old-name.txt", "deleted"],
    ]);
    expect(await run("ide_original", { path: "mine.txt" })).toMatchObject({ output: "v1\n" });
  });

  it("outside git: a folder deleted or moved whole lists each of its files, and each can be put back", async () => {
    await mkdir(join(ws.dir, "old/deep"), { recursive: true });
    await writeFile(join(ws.dir, "old/a.txt"), "a\n");
    await writeFile(join(ws.dir, "old/deep/b.txt"), "b\n");
    await mkdir(join(ws.dir, "src"));
    await writeFile(join(ws.dir, "src/main.ts"), "main\n");
    const person = (op: "ide_write" | "ide_rename" | "ide_delete", input: unknown) =>
      personFileOps[op].run(PERSON_FILE_OPS[op].parse(input), {
        ...opContext(ws.workspace),
        filesChanged: () => undefined,
      });

    expect(await person("ide_delete", { path: "old" })).toMatchObject({ ok: true, output: "deleted old" });
    expect(await person("ide_rename", { from: "src", to: "lib/src" })).toMatchObject({ ok: true });
    expect((await changes()).files.map((f) => [f.path, f.status])).toEqual([
      ["lib/src/main.ts", "added"],
      ["old/a.txt", "deleted"],
      ["old/deep/b.txt", "deleted"],
      ["src/main.ts", "deleted"],
    ]);
    expect(await run("ide_original", { path: "old/deep/b.txt" })).toMatchObject({
      ok: true,
      output: "b\n",
      meta: { existed: true },
    });
    // Discard, as the panel does it: the earlier version saved back, its folders made again.
    expect(await person("ide_write", { path: "old/deep/b.txt", content: "b\n" })).toMatchObject({ ok: true });
    expect((await changes()).files.map((f) => f.path)).toEqual(["lib/src/main.ts", "old/a.txt", "src/main.ts"]);
  });

  it("outside git: a folder past the limits keeps what fits and says how many files it left out", async () => {
    await mkdir(join(ws.dir, "big"));
    for (const n of [1, 2, 3, 4]) await writeFile(join(ws.dir, `big/${n}.txt`), `${n}\n`);
    await mkdir(join(ws.dir, "wide"));
    await writeFile(join(ws.dir, "wide/x.txt"), "12345\n");
    await writeFile(join(ws.dir, "wide/y.txt"), "12345\n");
    expect(await ws.workspace.diff.rememberFolder("big", undefined, { maxFiles: 3, maxBytes: 1 << 20 })).toBe(1);
    expect(await ws.workspace.diff.rememberFolder("wide", undefined, { maxFiles: 100, maxBytes: 10 })).toBe(1);
    await rm(join(ws.dir, "big"), { recursive: true });
    await rm(join(ws.dir, "wide"), { recursive: true });
    expect((await changes()).files.map((f) => f.path.split("/")[0])).toEqual(["big", "big", "big", "wide"]);
  });

  it("a workspace in a folder its enclosing repository ignores keeps its changes against the baseline", async () => {
    // As `npm start` in a Quiver checkout: ./.quiver/workspace, with .quiver/ in .gitignore.
    const repo = await mkdtemp(join(tmpdir(), "quiver-enclosing-"));
    try {
      execFileSync("git", ["init", "-q"], { cwd: repo });
      await writeFile(join(repo, ".gitignore"), ".quiver/\n");
      execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", "add", "."], { cwd: repo });
      execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "start"], {
        cwd: repo,
      });
      const dir = join(repo, ".quiver", "workspace");
      await mkdir(dir, { recursive: true });
      const nested = await Workspace.open(dir, { watch: false });
      expect((await writeFileOp.run({ path: "app.py", content: "print(1)\n" }, opContext(nested))).ok).toBe(true);
      const listed = PersonChanges.parse((await personFileOps.ide_changes.run({}, opContext(nested))).meta);
      expect(listed).toEqual({
        mode: "baseline",
        truncated: false,
        files: [{ path: "app.py", status: "added", added: 1, removed: 0 }],
      });
    } finally {
      await rm(repo, { recursive: true, force: true });
    }
  });

  it("a name the agent chose cannot forge another file's entry: untracked names are quoted as git quotes them", async () => {
    await writeFile(join(ws.dir, "README.md"), "# readme\n");
    git("init", "-q", "-b", "main");
    git("add", ".");
    git("commit", "-qm", "start");
    // A folder and a file whose names carry a newline and a forged header after it.
    const folder = join(ws.dir, "x\ndiff --git a/README.md b");
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, "README.md\nnew file mode 100644\n+"), "hi\n");
    await writeFile(join(ws.dir, 'café "q".txt'), "é\n");
    await writeFile(join(ws.dir, "tab\there.txt"), "t\n");
    expect((await changes()).files).toEqual([
      { path: 'café "q".txt', status: "added", added: 1, removed: 0 },
      { path: "tab\there.txt", status: "added", added: 1, removed: 0 },
      {
        path: "x\ndiff --git a/README.md b/README.md\nnew file mode 100644\n+",
        status: "added",
        added: 1,
        removed: 0,
      },
    ]);
    // A tracked file with such a name, from git's own header (octal bytes for the é).
    git("add", ".");
    git("commit", "-qm", "more");
    await writeFile(join(ws.dir, 'café "q".txt'), "e\n");
    expect((await changes()).files).toEqual([{ path: 'café "q".txt', status: "modified", added: 1, removed: 1 }]);
  });

  it("a line break other than \\n, in a name or in content, starts no section", async () => {
    await writeFile(join(ws.dir, "README.md"), "# readme\n");
    await writeFile(join(ws.dir, "notes.txt"), "a\n");
    git("init", "-q", "-b", "main");
    git("add", ".");
    git("commit", "-qm", "start");
    await mkdir(join(ws.dir, "x\u2028diff --git a/README.md b"), { recursive: true });
    await writeFile(join(ws.dir, "x\u2028diff --git a/README.md b/README.md"), "n\n");
    git("add", ".");
    await writeFile(join(ws.dir, "notes.txt"), "a\rdiff --git a/README.md b/README.md\n\u2028diff --git a/x b/x\n");
    // A name that is not UTF-8 is listed too, never hidden.
    await writeFile(Buffer.from(`${ws.dir}/evil\xff.sh`, "latin1"), "x".repeat(600_000));
    const files = (await changes()).files;
    expect(files.map((f) => f.path)).toEqual([
      "evil\uFFFD.sh",
      "notes.txt",
      "x\u2028diff --git a/README.md b/README.md",
    ]);
    expect(files[0]).toMatchObject({ status: "added", binary: true });
    expect(files.find((f) => f.path === "notes.txt")).toMatchObject({ status: "modified", added: 2, removed: 1 });
  });

  it("the repository's diff settings cannot change the headers a path is read from", async () => {
    await writeFile(join(ws.dir, "README.md"), "# readme\n");
    await writeFile(join(ws.dir, "xxREADME.md"), "x\n");
    git("init", "-q", "-b", "main");
    git("add", ".");
    git("commit", "-qm", "start");
    git("config", "diff.noprefix", "true");
    git("config", "diff.mnemonicPrefix", "true");
    git("config", "core.quotePath", "false");
    await writeFile(join(ws.dir, "xxREADME.md"), "y\n");
    expect((await changes()).files).toEqual([{ path: "xxREADME.md", status: "modified", added: 1, removed: 1 }]);
  });

  it("a sparse file of gigabytes is listed without being read", async () => {
    await writeFile(join(ws.dir, "a.txt"), "a\n");
    git("init", "-q", "-b", "main");
    git("add", ".");
    git("commit", "-qm", "start");
    execFileSync("truncate", ["-s", "3G", join(ws.dir, "big.bin")]);
    await writeFile(join(ws.dir, "large.txt"), "x".repeat(TEXT_DIFF_MAX_BYTES + 1));
    const before = process.memoryUsage().rss;
    expect((await changes()).files).toEqual([
      { path: "big.bin", status: "added", added: 0, removed: 0, binary: true },
      { path: "large.txt", status: "added", added: 0, removed: 0, binary: true },
    ]);
    // Reading it (as before) took gigabytes of memory and seconds; now it is not read at all.
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 * 1024);
  });

  it("reads a quoted path from git's header", () => {
    const diff = 'diff --git "a/say \\"hi\\".txt" "b/say \\"hi\\".txt"\n--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n';
    expect(changedFiles(diff)).toEqual([{ path: 'say "hi".txt', status: "modified", added: 1, removed: 1 }]);
  });
});
