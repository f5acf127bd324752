// search_text on a real runner (ripgrep): literal and regex, case rules, .gitignore honoured,
// path/glob filters, bounded output with a marker, a pipe refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { runnerHarness } from "../../testing/runner";
import { searchTextTool } from "./search_text";

let h: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  h = await runnerHarness();
  await mkdir(`${h.dir}/src`, { recursive: true });
  await mkdir(`${h.dir}/build`, { recursive: true });
  await writeFile(`${h.dir}/.gitignore`, "build/\n");
  await writeFile(`${h.dir}/src/a.ts`, "function foo(x) {}\nconst y = foo(1);\n// Foo is here\n");
  await writeFile(`${h.dir}/src/b.md`, "call foo(2) from docs\n");
  await writeFile(`${h.dir}/build/out.ts`, "foo(3) in ignored output\n");
  await writeFile(`${h.dir}/many.txt`, Array.from({ length: 50 }, (_, i) => `needle ${i}`).join("\n"));
});
afterAll(async () => h?.close());

describe("search_text", () => {
  it("finds literal text (regex characters are not special), skipping ignored files", async () => {
    const r = await h.call(searchTextTool, { pattern: "foo(" });
    expect(r.output.split("\n")).toEqual([
      "src/a.ts:1:function foo(x) {}",
      "src/a.ts:2:const y = foo(1);",
      "src/b.md:1:call foo(2) from docs",
    ]);
    expect(r.meta).toMatchObject({ matches: 3, truncated: false });
  });

  it("supports regex, case rules, path and glob filters", async () => {
    expect((await h.call(searchTextTool, { pattern: "foo\\(\\d\\)", regex: true })).output.split("\n")).toEqual([
      "src/a.ts:2:const y = foo(1);",
      "src/b.md:1:call foo(2) from docs",
    ]);
    expect((await h.call(searchTextTool, { pattern: "Foo" })).output).toBe("src/a.ts:3:// Foo is here");
    expect(
      (await h.call(searchTextTool, { pattern: "Foo", case_sensitive: false, glob: "*.ts" })).output.split("\n"),
    ).toHaveLength(3);
    expect((await h.call(searchTextTool, { pattern: "foo", path: "src/b.md" })).output).toBe(
      "src/b.md:1:call foo(2) from docs",
    );
    expect((await h.call(searchTextTool, { pattern: "nothing-like-this" })).output).toBe("No matches.");
    expect((await h.call(searchTextTool, { pattern: "(", regex: true })).error).toMatch(/search failed/);
    expect((await h.call(searchTextTool, { pattern: "x", path: "/etc" })).error).toMatch(/outside the workspace/);
  });

  it("refuses a path naming a pipe at once, rather than waiting on it to its deadline", async () => {
    execFileSync("mkfifo", [`${h.dir}/src/pipe`]);
    const started = Date.now();
    const r = await h.call(searchTextTool, { pattern: "foo", path: "src/pipe" });
    expect(r.error).toMatch(/not a file or folder/);
    expect(Date.now() - started).toBeLessThan(5_000);
    // A folder holding it is searched as before (ripgrep skips what is not a file there).
    expect((await h.call(searchTextTool, { pattern: "foo", path: "src" })).output).toContain("src/a.ts:1:");
  });

  it("bounds the result with a marker", async () => {
    const r = await h.call(searchTextTool, { pattern: "needle", max_results: 10 });
    const lines = r.output.split("\n");
    expect(lines).toHaveLength(11);
    expect(lines[10]).toBe("[results stopped at 10 matching lines; narrow the pattern, path or glob]");
    expect(r.meta).toMatchObject({ truncated: true });
  });
});
