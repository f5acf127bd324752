// The diff an edit or write answers after it is applied (meta.diff, for the tool card): the file's
// real line numbers, the same diff the approval card's preview showed, and bounded for a huge write.
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { opContext, tempWorkspace } from "../testing/exec";
import { capDiff, changeDiff, DIFF_CUT_MARK, DIFF_MAX_CHARS } from "./change-diff";
import { editFileOp, writeFileOp } from "./edit";
import { previewChangeOp } from "./preview";
import { readFileOp } from "./read";

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
beforeEach(async () => {
  ws = await tempWorkspace();
});
afterEach(() => ws.cleanup());

const ctx = () => opContext(ws.workspace);
const lines = (n: number, f = (i: number) => `line ${i}`) =>
  Array.from({ length: n }, (_, i) => f(i + 1)).join("\n") + "\n";

describe("the applied change's diff", () => {
  it("an edit answers the file's real hunk, the same diff its preview showed, and not in the model's output", async () => {
    await writeFile(join(ws.dir, "a.ts"), lines(40));
    await readFileOp.run({ path: "a.ts" }, ctx());
    const edit = { path: "a.ts", old_string: "line 21\n", new_string: "LINE 21\n" };
    const preview = await previewChangeOp.run({ tool: "edit_file", input: edit }, ctx());
    const r = await editFileOp.run(edit, ctx());
    expect(r.ok).toBe(true);
    expect(r.meta?.diff).toBe(
      [
        "--- a/a.ts",
        "+++ b/a.ts",
        "@@ -18,7 +18,7 @@",
        " line 18",
        " line 19",
        " line 20",
        "-line 21",
        "+LINE 21",
        " line 22",
        " line 23",
        " line 24",
        "",
      ].join("\n"),
    );
    expect(r.meta?.diff).toBe(preview.output);
    expect(r.output).not.toContain("@@");
    expect(await readFile(join(ws.dir, "a.ts"), "utf8")).toContain("LINE 21\n");
  });

  it("a write answers a creation against /dev/null and an overwrite against the old text", async () => {
    const created = await writeFileOp.run({ path: "new.txt", content: "one\ntwo\n" }, ctx());
    expect(created.meta).toMatchObject({
      created: true,
      diff: "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n",
    });
    await writeFile(join(ws.dir, "old.txt"), lines(30));
    await readFileOp.run({ path: "old.txt" }, ctx());
    const over = await writeFileOp.run(
      { path: "old.txt", content: lines(30, (i) => (i === 25 ? "changed" : `line ${i}`)) },
      ctx(),
    );
    expect(over.meta?.diff).toContain("@@ -22,7 +22,7 @@\n line 22\n line 23\n line 24\n-line 25\n+changed\n");
  });

  it("a huge write (1.3 MB, under the workspace budget) ships a bounded diff that says it was cut, and the file is written whole", async () => {
    const content = lines(15_000, (i) => `row ${i} ${"x".repeat(80)}`);
    const r = await writeFileOp.run({ path: "huge.txt", content }, ctx());
    const diff = String(r.meta?.diff);
    expect(diff.length).toBeLessThanOrEqual(DIFF_MAX_CHARS + 100);
    expect(diff.startsWith("--- /dev/null\n+++ b/huge.txt\n@@ -0,0 +1,15000 @@\n+row 1 ")).toBe(true);
    expect(diff).toMatch(new RegExp(`\\n${DIFF_CUT_MARK} \\d+ more lines \\(\\d+ characters\\) not shown\\n$`));
    expect((await readFile(join(ws.dir, "huge.txt"), "utf8")).length).toBe(content.length);
  });

  it("cuts on a whole line and counts what it left out", () => {
    const diff = "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n";
    expect(capDiff(diff, 1000)).toBe(diff);
    expect(capDiff(diff, 30)).toBe(`--- a/x\n+++ b/x\n${DIFF_CUT_MARK} 4 more lines (31 characters) not shown\n`);
    expect(changeDiff("x", "a\n", "a\n")).toBe("--- a/x\n+++ b/x\n");
  });
});
