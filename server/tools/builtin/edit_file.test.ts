// edit_file on a real runner: read-before-edit, stale reads, uniqueness errors with line numbers,
// write confinement (.git, symlinks), and the diff budget rolling back the edit that crosses it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdir, readFile, readdir, symlink, writeFile } from "node:fs/promises";
import { runnerHarness } from "../../testing/runner";
import { editFileTool } from "./edit_file";
import { readFileTool } from "./read_file";

let h: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  h = await runnerHarness({ args: ["--diff-max-lines", "40"] });
});
afterAll(async () => h?.close());

describe("edit_file", () => {
  it("requires a complete read in this session and refuses a stale one", async () => {
    await writeFile(`${h.dir}/a.ts`, "const a = 1;\nconst b = 2;\nconst c = 3;\n");
    const edit = { path: "a.ts", old_string: "const b = 2;", new_string: "const b = 20;" };
    expect((await h.call(editFileTool, edit)).error).toBe(
      "a.ts has not been read in this session; read it with read_file first",
    );
    await h.call(readFileTool, { path: "a.ts", limit: 2 });
    expect((await h.call(editFileTool, edit)).error).toMatch(/only partly read/);
    await h.call(readFileTool, { path: "a.ts", offset: 3 });
    // Another session's read does not count for this one.
    expect((await h.call(editFileTool, edit, "other")).error).toMatch(/has not been read in this session/);
    const ok = await h.call(editFileTool, edit);
    expect(ok.error).toBeUndefined();
    expect(ok.output).toContain("Edited a.ts: replaced 1 occurrence.");
    expect(ok.output).toContain("     2\tconst b = 20;");
    expect(await readFile(`${h.dir}/a.ts`, "utf8")).toBe("const a = 1;\nconst b = 20;\nconst c = 3;\n");
    // Its own write keeps the ledger current; someone else's change makes it stale.
    expect(
      (await h.call(editFileTool, { path: "a.ts", old_string: "const c = 3;", new_string: "const c = 30;" })).error,
    ).toBeUndefined();
    await writeFile(`${h.dir}/a.ts`, "changed by the person\n");
    expect((await h.call(editFileTool, { path: "a.ts", old_string: "changed", new_string: "x" })).error).toMatch(
      /changed since it was last read; read it again/,
    );
  });

  it("says how many times and where when old_string is missing or not unique", async () => {
    await writeFile(`${h.dir}/dup.txt`, "foo\nbar\nfoo\nbaz\nfoo\n");
    await h.call(readFileTool, { path: "dup.txt" });
    expect((await h.call(editFileTool, { path: "dup.txt", old_string: "foo", new_string: "x" })).error).toBe(
      "old_string occurs 3 times in dup.txt (at lines 1, 3, 5); include more surrounding lines so it matches exactly once, or set replace_all to true",
    );
    // Many matches on lines far apart: the first 20 lines, each right (read in one pass).
    await writeFile(`${h.dir}/many.txt`, "x\n".repeat(3).concat("foo\nbar\n".repeat(4_000)));
    await h.call(readFileTool, { path: "many.txt", limit: 10_000 });
    const lines = Array.from({ length: 20 }, (_, i) => 4 + 2 * i).join(", ");
    expect((await h.call(editFileTool, { path: "many.txt", old_string: "foo", new_string: "x" })).error).toBe(
      `old_string occurs 4000 times in many.txt (at lines ${lines}, …); include more surrounding lines so it matches exactly once, or set replace_all to true`,
    );
    expect((await h.call(editFileTool, { path: "dup.txt", old_string: "qux", new_string: "x" })).error).toMatch(
      /not found in dup.txt \(0 occurrences\)/,
    );
    expect((await h.call(editFileTool, { path: "dup.txt", old_string: "  bar", new_string: "x" })).error).toMatch(
      /occurs at line\(s\) 2/,
    );
    const all = await h.call(editFileTool, {
      path: "dup.txt",
      old_string: "foo",
      new_string: "qux",
      replace_all: true,
    });
    expect(all.output).toContain("replaced 3 occurrences");
    expect(await readFile(`${h.dir}/dup.txt`, "utf8")).toBe("qux\nbar\nqux\nbaz\nqux\n");
  });

  it("previews the change as a diff of the real file, writing nothing, and refuses what the edit would refuse", async () => {
    const lines = Array.from({ length: 60 }, (_, i) => `line ${i + 1}`);
    await writeFile(`${h.dir}/long.txt`, lines.join("\n") + "\n");
    const edit = { path: "long.txt", old_string: "line 42\n", new_string: "LINE 42\nline 42b\n" };
    expect(await h.preview(editFileTool, edit)).toEqual({
      problem: "long.txt has not been read in this session; read it with read_file first",
    });
    await h.call(readFileTool, { path: "long.txt" });
    const r = await h.preview(editFileTool, edit);
    expect(r && "diff" in r && r.diff).toBe(
      [
        "--- a/long.txt",
        "+++ b/long.txt",
        "@@ -39,7 +39,8 @@",
        " line 39",
        " line 40",
        " line 41",
        "-line 42",
        "+LINE 42",
        "+line 42b",
        " line 43",
        " line 44",
        " line 45",
        "",
      ].join("\n"),
    );
    expect(await readFile(`${h.dir}/long.txt`, "utf8")).toBe(lines.join("\n") + "\n");
    expect(await h.preview(editFileTool, { path: "long.txt", old_string: "line 4", new_string: "x" })).toEqual({
      problem: expect.stringMatching(/occurs 11 times in long.txt/),
    });
    expect(await h.preview(editFileTool, { path: "nope.txt", old_string: "a", new_string: "b" })).toEqual({
      problem: expect.stringMatching(/does not exist/),
    });
    // The preview took nothing from the ledger: the edit itself still goes through.
    expect((await h.call(editFileTool, edit)).error).toBeUndefined();
  });

  it("never writes into .git or through a symbolic link", async () => {
    execFileSync("git", ["init", "-q", h.dir]);
    const gitCfg = await readFile(`${h.dir}/.git/config`, "utf8");
    const r = await h.call(editFileTool, {
      path: ".git/config",
      old_string: "[core]",
      new_string: "[core]\n\tfsmonitor = evil",
    });
    expect(r.error).toMatch(/inside .git; git internals are not writable/);
    expect(await readFile(`${h.dir}/.git/config`, "utf8")).toBe(gitCfg);
    await mkdir(`${h.dir}/real`, { recursive: true });
    await writeFile(`${h.dir}/real/t.txt`, "target\n");
    await symlink(`${h.dir}/real/t.txt`, `${h.dir}/link.txt`);
    await h.call(readFileTool, { path: "link.txt" });
    expect((await h.call(editFileTool, { path: "link.txt", old_string: "target", new_string: "x" })).error).toMatch(
      /symbolic link; file tools do not write through links/,
    );
    expect(await readFile(`${h.dir}/real/t.txt`, "utf8")).toBe("target\n");
  });

  it("rolls back an edit that pushes the uncommitted diff over its budget, leaving no temp files", async () => {
    // The workspace became a git repo above: commit everything so the budget starts at zero.
    execFileSync("git", ["-C", h.dir, "add", "-A"]);
    execFileSync("git", ["-C", h.dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]);
    const original = Array.from({ length: 60 }, (_, i) => `line ${i}`).join("\n") + "\n";
    await writeFile(`${h.dir}/big.txt`, original);
    execFileSync("git", ["-C", h.dir, "add", "big.txt"]);
    execFileSync("git", ["-C", h.dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "big"]);
    await h.call(readFileTool, { path: "big.txt" });
    const small = await h.call(editFileTool, { path: "big.txt", old_string: "line 1\n", new_string: "LINE 1\n" });
    expect(small.error).toBeUndefined();
    const huge = await h.call(editFileTool, {
      path: "big.txt",
      old_string: "line 10\n",
      new_string: Array.from({ length: 50 }, () => "added").join("\n") + "\n",
    });
    expect(huge.error).toMatch(
      /change rolled back: the workspace's uncommitted diff would exceed its budget \(\d+ changed lines > 40\)/,
    );
    expect(await readFile(`${h.dir}/big.txt`, "utf8")).toBe(original.replace("line 1\n", "LINE 1\n"));
    expect((await readdir(h.dir)).filter((n) => n.includes(".quiver-"))).toEqual([]);
    // The ledger still matches the file on disk, so a smaller edit goes through.
    expect(
      (await h.call(editFileTool, { path: "big.txt", old_string: "line 2\n", new_string: "LINE 2\n" })).error,
    ).toBeUndefined();
  });

  it("refuses to edit a file that is not UTF-8 (its other bytes would be replaced) and keeps a BOM", async () => {
    const latin1 = Buffer.from("caf\xe9 au lait\n", "latin1");
    await writeFile(`${h.dir}/menu.txt`, latin1);
    expect((await h.call(readFileTool, { path: "menu.txt" })).output).toMatch(
      /caf\ufffd au lait\n\[not UTF-8: .* edit_file and apply_patch refuse this file\]$/,
    );
    const r = await h.call(editFileTool, { path: "menu.txt", old_string: "au lait", new_string: "noir" });
    expect(r.error).toMatch(/^menu.txt is not UTF-8 text: editing it as text would replace its other bytes/);
    expect((await readFile(`${h.dir}/menu.txt`)).equals(latin1)).toBe(true);
    await writeFile(`${h.dir}/bom.txt`, "\ufeffcafé au lait\n");
    await h.call(readFileTool, { path: "bom.txt" });
    expect(
      (await h.call(editFileTool, { path: "bom.txt", old_string: "au lait", new_string: "noir" })).error,
    ).toBeUndefined();
    expect(await readFile(`${h.dir}/bom.txt`, "utf8")).toBe("\ufeffcafé noir\n");
  });
});
