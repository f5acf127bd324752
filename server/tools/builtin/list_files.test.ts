// list_files on a real runner: .gitignore (root and nested) honoured, .git hidden, depth and
// limit bounds with a marker, name order past the first names a folder's listing sorts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdir, writeFile } from "node:fs/promises";
import { runnerHarness } from "../../testing/runner";
import { listFilesTool } from "./list_files";

let h: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  h = await runnerHarness();
  for (const d of [".git", "src/lib", "node_modules/pkg", "dist", "docs"])
    await mkdir(`${h.dir}/${d}`, { recursive: true });
  const files: Record<string, string> = {
    ".gitignore": "node_modules/\ndist\n*.log\n",
    ".env.example": "A=1\n",
    "src/index.ts": "",
    "src/lib/util.ts": "",
    "src/debug.log": "",
    "src/lib/.gitignore": "generated.ts\n",
    "src/lib/generated.ts": "",
    "node_modules/pkg/index.js": "",
    "dist/out.js": "",
    "docs/readme.md": "",
    ".git/HEAD": "ref: refs/heads/main\n",
  };
  for (const [p, c] of Object.entries(files)) await writeFile(`${h.dir}/${p}`, c);
});
afterAll(async () => h?.close());

describe("list_files", () => {
  it("lists the tree without ignored entries or .git", async () => {
    const r = await h.call(listFilesTool, {});
    expect(r.output.split("\n")).toEqual([
      ".env.example",
      ".gitignore",
      "docs/",
      "docs/readme.md",
      "src/",
      "src/index.ts",
      "src/lib/",
      "src/lib/.gitignore",
      "src/lib/util.ts",
    ]);
  });

  it("honours depth, a sub-folder, an explicitly named ignored folder, and the limit", async () => {
    expect((await h.call(listFilesTool, { depth: 1 })).output.split("\n")).toEqual([
      ".env.example",
      ".gitignore",
      "docs/",
      "src/",
    ]);
    expect((await h.call(listFilesTool, { path: "src/lib" })).output.split("\n")).toEqual([
      "src/lib/.gitignore",
      "src/lib/util.ts",
    ]);
    expect((await h.call(listFilesTool, { path: "node_modules" })).output.split("\n")).toEqual([
      "node_modules/pkg/",
      "node_modules/pkg/index.js",
    ]);
    const limited = await h.call(listFilesTool, { limit: 3 });
    const lines = limited.output.split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[3]).toBe("[listing stopped at 3 entries; give a narrower path, a depth, or a larger limit]");
    expect((await h.call(listFilesTool, { path: "../" })).error).toMatch(/outside the workspace/);
    expect((await h.call(listFilesTool, { path: "src/index.ts" })).error).toMatch(/is a file, not a directory/);
  });

  it("leaves out a .gitignore pattern that would backtrack for minutes, and keeps the others", async () => {
    const deep = `deep/${Array(60).fill("a").join("/")}`;
    await mkdir(`${h.dir}/${deep}`, { recursive: true });
    await writeFile(`${h.dir}/${deep}/keep.txt`, "");
    await writeFile(`${h.dir}/${deep}/noise.tmp`, "");
    await writeFile(`${h.dir}/deep/.gitignore`, `**/a/**/a/**/a/**/a/**/a/**/a/**/a/**/b\n*.tmp\n`);
    const r = await h.call(listFilesTool, { path: "deep", limit: 1_000 });
    expect(r.error).toBeUndefined();
    const lines = r.output.split("\n");
    expect(lines).toContain(`${deep}/keep.txt`);
    expect(lines).not.toContain(`${deep}/noise.tmp`);
  }, 20_000); // seconds at most; with the pattern, minutes

  it("keeps name order when ignored names make it read past the first ones it sorted", async () => {
    const names = Array.from({ length: 600 }, (_, i) => `f${String(i).padStart(3, "0")}`);
    // Made in a shuffled order, so the folder's own order is not the names'.
    const shuffled = names.map((n, i) => ({ n, k: (i * 7919) % 601 })).sort((a, b) => a.k - b.k);
    await mkdir(`${h.dir}/many`);
    for (const { n } of shuffled) await writeFile(`${h.dir}/many/${n}`, "");
    await writeFile(`${h.dir}/many/.gitignore`, "f0*\nf1*\nf2*\n");
    const r = await h.call(listFilesTool, { path: "many", limit: 150 });
    const kept = names.slice(300).map((n) => `many/${n}`);
    expect(r.output.split("\n")).toEqual([
      "many/.gitignore",
      ...kept.slice(0, 149),
      "[listing stopped at 150 entries; give a narrower path, a depth, or a larger limit]",
    ]);
    expect((await h.call(listFilesTool, { path: "many" })).output.split("\n")).toEqual(["many/.gitignore", ...kept]);
  });
});
