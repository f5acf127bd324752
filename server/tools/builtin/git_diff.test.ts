// git_diff on a real runner: the session's changes against HEAD (untracked files included),
// the whole workspace on request, path filter and stat.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { runnerHarness } from "../../testing/runner";
import { editFileTool } from "./edit_file";
import { gitDiffTool } from "./git_diff";
import { readFileTool } from "./read_file";
import { writeFileTool } from "./write_file";

let h: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  h = await runnerHarness();
  await writeFile(`${h.dir}/tracked.txt`, "a\nb\nc\n");
  await writeFile(`${h.dir}/person.txt`, "mine\n");
  execFileSync("git", ["init", "-q", h.dir]);
  execFileSync("git", ["-C", h.dir, "add", "-A"]);
  execFileSync("git", ["-C", h.dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]);
});
afterAll(async () => h?.close());

describe("git_diff", () => {
  it("shows only this session's changes by default, everything with scope workspace", async () => {
    expect((await h.call(gitDiffTool, {})).output).toMatch(/^This session has not changed any files/);
    await h.call(readFileTool, { path: "tracked.txt" });
    await h.call(editFileTool, { path: "tracked.txt", old_string: "b\n", new_string: "B\n" });
    await h.call(writeFileTool, { path: "added.txt", content: "new\n" });
    await writeFile(`${h.dir}/person.txt`, "changed by the person\n");
    const mine = await h.call(gitDiffTool, {});
    expect(mine.output).toContain("diff --git a/tracked.txt b/tracked.txt");
    expect(mine.output).toContain("-b\n+B");
    expect(mine.output).toContain(
      "diff --git a/added.txt b/added.txt\nnew file mode 100644\n--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1,1 @@\n+new",
    );
    expect(mine.output).not.toContain("person.txt");
    expect((await h.call(gitDiffTool, {}, "someone-else")).output).toMatch(/has not changed any files/);
    const all = await h.call(gitDiffTool, { scope: "workspace" });
    expect(all.output).toContain("person.txt");
  });

  it("filters by path and summarises with stat", async () => {
    const one = await h.call(gitDiffTool, { path: "tracked.txt" });
    expect(one.output).toContain("tracked.txt");
    expect(one.output).not.toContain("added.txt");
    expect((await h.call(gitDiffTool, { stat: true })).output.split("\n")).toEqual([
      "tracked.txt | +1 -1",
      "added.txt | +1 -0",
      "2 file(s) changed, 3 line(s)",
    ]);
  });
});
