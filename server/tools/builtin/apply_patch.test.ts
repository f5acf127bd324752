// apply_patch on a real runner: multi-file patches applied all hunks or none, creation and
// deletion, the ledger for every file it modifies, and the diff its cards show (before: the
// approval's preview; after: what was applied), worked out from the files themselves.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lstat, readFile, writeFile } from "node:fs/promises";
import { runnerHarness } from "../../testing/runner";
import { applyPatchTool } from "./apply_patch";
import { readFileTool } from "./read_file";

let h: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  h = await runnerHarness();
});
afterAll(async () => h?.close());

const A = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";
const B = "alpha\nbeta\ngamma\n";

describe("apply_patch", () => {
  it("applies every hunk over several files, creates and deletes", async () => {
    await writeFile(`${h.dir}/a.txt`, A);
    await writeFile(`${h.dir}/b.txt`, B);
    await writeFile(`${h.dir}/gone.txt`, "bye\n");
    for (const p of ["a.txt", "b.txt", "gone.txt"]) await h.call(readFileTool, { path: p });
    const patch = [
      "diff --git a/a.txt b/a.txt",
      "--- a/a.txt",
      "+++ b/a.txt",
      "@@ -1,3 +1,3 @@",
      "-one",
      "+ONE",
      " two",
      " three",
      "@@ -8,3 +8,3 @@",
      " eight",
      "-nine",
      "+NINE",
      " ten",
      "--- a/b.txt",
      "+++ b/b.txt",
      "@@ -2,2 +2,3 @@",
      " beta",
      " gamma",
      "+delta",
      "--- /dev/null",
      "+++ b/new/c.txt",
      "@@ -0,0 +1,2 @@",
      "+fresh",
      "+file",
      "--- a/gone.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-bye",
      "",
    ].join("\n");
    const r = await h.call(applyPatchTool, { patch });
    expect(r.error).toBeUndefined();
    expect(r.output).toBe(
      "Patch applied: modified a.txt (2 hunks); modified b.txt (1 hunk); created new/c.txt (1 hunk); deleted gone.txt (1 hunk).",
    );
    expect(await readFile(`${h.dir}/a.txt`, "utf8")).toBe(A.replace("one", "ONE").replace("nine", "NINE"));
    expect(await readFile(`${h.dir}/b.txt`, "utf8")).toBe(`${B}delta\n`);
    expect(await readFile(`${h.dir}/new/c.txt`, "utf8")).toBe("fresh\nfile\n");
    await expect(lstat(`${h.dir}/gone.txt`)).rejects.toThrow();
    // The card's diff, file by file with real names; the model's text and meta do not carry it.
    expect(r.diff).toContain("--- a/a.txt\n+++ b/a.txt\n@@ -1,4 +1,4 @@\n-one\n+ONE\n");
    expect(r.diff).toContain("--- /dev/null\n+++ b/new/c.txt\n@@ -0,0 +1,2 @@\n+fresh\n+file\n");
    expect(r.diff).toContain("--- a/gone.txt\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-bye\n");
    expect(r.meta).not.toHaveProperty("diff");
  });

  it("shows where a hunk really landed: the preview and the applied diff carry the file's line numbers", async () => {
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`);
    await writeFile(`${h.dir}/moved.txt`, ["added on top", "added on top", ...lines].join("\n") + "\n");
    await h.call(readFileTool, { path: "moved.txt" });
    // Written against the file as it was before two lines were added above: "line 20" is line
    // 22 now, and the diffs say so (the patch's own header says 19).
    const patch = [
      "--- a/moved.txt",
      "+++ b/moved.txt",
      "@@ -19,3 +19,3 @@",
      " line 19",
      "-line 20",
      "+LINE 20",
      " line 21",
      "",
    ].join("\n");
    const expected = [
      "--- a/moved.txt",
      "+++ b/moved.txt",
      "@@ -19,7 +19,7 @@",
      " line 17",
      " line 18",
      " line 19",
      "-line 20",
      "+LINE 20",
      " line 21",
      " line 22",
      " line 23",
      "",
    ].join("\n");
    expect(await h.preview(applyPatchTool, { patch })).toEqual({ diff: expected });
    expect(await h.preview(applyPatchTool, { patch: patch.replace("-line 20", "-line twenty") })).toEqual({
      problem: expect.stringMatching(/hunk 1 .* of moved.txt does not apply/),
    });
    // The preview wrote nothing and took nothing from the ledger.
    expect(await readFile(`${h.dir}/moved.txt`, "utf8")).not.toContain("LINE 20");
    const r = await h.call(applyPatchTool, { patch });
    expect(r.error).toBeUndefined();
    expect(r.diff).toBe(expected);
  });

  it("changes nothing when one hunk of one file does not apply, and names it", async () => {
    await writeFile(`${h.dir}/x.txt`, A);
    await writeFile(`${h.dir}/y.txt`, B);
    await h.call(readFileTool, { path: "x.txt" });
    await h.call(readFileTool, { path: "y.txt" });
    const patch = [
      "--- a/x.txt",
      "+++ b/x.txt",
      "@@ -1,2 +1,2 @@",
      "-one",
      "+uno",
      " two",
      "--- a/y.txt",
      "+++ b/y.txt",
      "@@ -1,2 +1,2 @@",
      " alpha",
      "-BETA-NOT-THERE",
      "+b",
      "",
    ].join("\n");
    const r = await h.call(applyPatchTool, { patch });
    expect(r.error).toMatch(/^hunk 1 \(@@ -1,2 \+1,2 @@\) of y.txt does not apply.*Nothing was changed/);
    expect(await readFile(`${h.dir}/x.txt`, "utf8")).toBe(A);
    expect(await readFile(`${h.dir}/y.txt`, "utf8")).toBe(B);
  });

  it("refuses to patch a file that is not UTF-8, changing nothing", async () => {
    const latin1 = Buffer.from("one\ncaf\xe9\n", "latin1");
    await writeFile(`${h.dir}/l1.txt`, latin1);
    await h.call(readFileTool, { path: "l1.txt" });
    const r = await h.call(applyPatchTool, {
      patch: ["--- a/l1.txt", "+++ b/l1.txt", "@@ -1,2 +1,2 @@", "-one", "+uno", " caf\ufffd", ""].join("\n"),
    });
    expect(r.error).toMatch(
      /^l1.txt is not UTF-8 text: editing it as text would replace its other bytes.*nothing was changed$/,
    );
    expect((await readFile(`${h.dir}/l1.txt`)).equals(latin1)).toBe(true);
  });

  it("rolls back files already written when a later file cannot be written", async () => {
    await writeFile(`${h.dir}/first.txt`, "keep me\n");
    await writeFile(`${h.dir}/blocker`, "a file where the patch wants a folder\n");
    await h.call(readFileTool, { path: "first.txt" });
    const patch = [
      "--- a/first.txt",
      "+++ b/first.txt",
      "@@ -1 +1 @@",
      "-keep me",
      "+changed",
      "--- /dev/null",
      "+++ b/blocker/inner.txt",
      "@@ -0,0 +1 @@",
      "+x",
      "",
    ].join("\n");
    const r = await h.call(applyPatchTool, { patch });
    expect(r.error).toBeDefined();
    expect(await readFile(`${h.dir}/first.txt`, "utf8")).toBe("keep me\n");
  });

  it("requires complete reads of modified files, refuses creating an existing file, and explains a non-patch", async () => {
    await writeFile(`${h.dir}/unread.txt`, "u\n");
    const r = await h.call(applyPatchTool, { patch: "--- a/unread.txt\n+++ b/unread.txt\n@@ -1 +1 @@\n-u\n+v\n" });
    expect(r.error).toMatch(/unread.txt has not been read in this session.*nothing was changed/);
    const c = await h.call(applyPatchTool, { patch: "--- /dev/null\n+++ b/unread.txt\n@@ -0,0 +1 @@\n+v\n" });
    expect(c.error).toMatch(/creates unread.txt, but it already exists/);
    expect((await h.call(applyPatchTool, { patch: "just some text" })).error).toMatch(/no hunks found/);
    expect(await readFile(`${h.dir}/unread.txt`, "utf8")).toBe("u\n");
  });
});
