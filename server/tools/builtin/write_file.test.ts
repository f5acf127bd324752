// write_file on a real runner: new files, overwrite only after a complete unchanged read,
// confinement for writes, and atomic rollback when the write cannot complete.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lstat, mkdir, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { runnerHarness } from "../../testing/runner";
import { readFileTool } from "./read_file";
import { writeFileTool } from "./write_file";

let h: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  h = await runnerHarness({ args: ["--diff-max-files", "5"] });
});
afterAll(async () => {
  await h?.close();
  await rm(`${h.dir}-evil`, { recursive: true, force: true });
});

describe("write_file", () => {
  it("creates new files (and folders), overwrites only a fully read unchanged file", async () => {
    const created = await h.call(writeFileTool, { path: "src/deep/new.ts", content: "export {};\n" });
    // A .ts file's result may end with its diagnostics (or say they were not ready), after a blank line.
    expect(created.output!.split("\n\n")[0]).toBe("Created src/deep/new.ts (1 line, 11 bytes).");
    await writeFile(`${h.dir}/exists.txt`, "old\n");
    expect((await h.call(writeFileTool, { path: "exists.txt", content: "new\n" })).error).toMatch(
      /has not been read in this session/,
    );
    await h.call(readFileTool, { path: "exists.txt" });
    expect((await h.call(writeFileTool, { path: "exists.txt", content: "new\n" })).output).toMatch(
      /^Overwrote exists.txt/,
    );
    expect(await readFile(`${h.dir}/exists.txt`, "utf8")).toBe("new\n");
  });

  it("previews a new file against nothing and an overwrite against the file's text, writing nothing", async () => {
    const created = await h.preview(writeFileTool, { path: "fresh/new.txt", content: "one\ntwo\n" });
    expect(created && "diff" in created && created.diff).toBe(
      ["--- /dev/null", "+++ b/fresh/new.txt", "@@ -0,0 +1,2 @@", "+one", "+two", ""].join("\n"),
    );
    await expect(lstat(`${h.dir}/fresh`)).rejects.toThrow();
    await writeFile(`${h.dir}/over.txt`, "keep\nold\n");
    expect(await h.preview(writeFileTool, { path: "over.txt", content: "keep\nnew\n" })).toEqual({
      problem: expect.stringMatching(/has not been read in this session/),
    });
    await h.call(readFileTool, { path: "over.txt" });
    const over = await h.preview(writeFileTool, { path: "over.txt", content: "keep\nnew\n" });
    expect(over && "diff" in over && over.diff).toMatch(
      /^--- a\/over.txt\n\+\+\+ b\/over.txt\n@@ -1,2 \+1,2 @@\n keep\n-old\n\+new\n$/,
    );
    expect(await readFile(`${h.dir}/over.txt`, "utf8")).toBe("keep\nold\n");
  });

  it("refuses writes outside the workspace, into .git and through symlinks, and writes nothing there", async () => {
    await mkdir(`${h.dir}-evil`, { recursive: true });
    await mkdir(`${h.dir}/.git`, { recursive: true });
    await symlink(`${h.dir}-evil`, `${h.dir}/out-dir`);
    await symlink(`${h.dir}-evil/target.txt`, `${h.dir}/dangling`);
    const cases: Array<[string, RegExp]> = [
      ["../escape.txt", /outside the workspace/],
      [`${h.dir}-evil/x.txt`, /outside the workspace/],
      ["/tmp/quiver-abs-escape.txt", /outside the workspace/],
      ["out-dir/x.txt", /through a symlink/],
      ["dangling", /symbolic link/],
      // Where a dangling link points is known from the link itself: outside, so refused.
      ["dangling/x.txt", /outside the workspace through a symlink/],
      [".git/hooks/pre-commit", /inside .git/],
      ["sub/.git/config", /inside .git/],
    ];
    for (const [path, why] of cases)
      expect((await h.call(writeFileTool, { path, content: "pwned\n" })).error, path).toMatch(why);
    expect(await readdir(`${h.dir}-evil`)).toEqual([]);
    await expect(lstat("/tmp/quiver-abs-escape.txt")).rejects.toThrow();
    await expect(lstat(`${h.dir}/.git/hooks/pre-commit`)).rejects.toThrow();
  });

  it("a write that fails part-way leaves the old content and no temp file behind", async () => {
    await writeFile(`${h.dir}/plain`, "a file, not a folder\n");
    const r = await h.call(writeFileTool, { path: "plain/child.txt", content: "x" });
    expect(r.error).toBeDefined();
    expect(await readFile(`${h.dir}/plain`, "utf8")).toBe("a file, not a folder\n");
    expect((await readdir(h.dir)).filter((n) => n.includes(".quiver-"))).toEqual([]);
  });

  it("rolls back the write that crosses the file budget (outside git: against content before the first write)", async () => {
    for (let i = 0; i < 3; i++)
      expect((await h.call(writeFileTool, { path: `budget/f${i}.txt`, content: `${i}\n` })).error).toBeUndefined();
    const over = await h.call(writeFileTool, { path: "budget/f3.txt", content: "3\n" });
    expect(over.error).toMatch(/rolled back.*\d+ files > 5/);
    await expect(lstat(`${h.dir}/budget/f3.txt`)).rejects.toThrow();
  });
});
