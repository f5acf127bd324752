// glob on a real runner: gitignore-style globs, .gitignore honoured, bounded.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdir, writeFile } from "node:fs/promises";
import { runnerHarness } from "../../testing/runner";
import { globTool } from "./glob";

let h: Awaited<ReturnType<typeof runnerHarness>>;
beforeAll(async () => {
  h = await runnerHarness();
  for (const d of ["src/ui", "lib", "out"]) await mkdir(`${h.dir}/${d}`, { recursive: true });
  await writeFile(`${h.dir}/.gitignore`, "out/\n");
  for (const f of ["top.ts", "src/a.ts", "src/ui/b.tsx", "src/ui/c.ts", "lib/d.js", "out/e.ts"])
    await writeFile(`${h.dir}/${f}`, "");
});
afterAll(async () => h?.close());

describe("glob", () => {
  it("matches at any depth or anchored, skipping ignored files", async () => {
    expect((await h.call(globTool, { pattern: "*.ts" })).output.split("\n")).toEqual([
      "src/a.ts",
      "src/ui/c.ts",
      "top.ts",
    ]);
    expect((await h.call(globTool, { pattern: "src/**/*.{ts,tsx}" })).output.split("\n")).toEqual([
      "src/a.ts",
      "src/ui/b.tsx",
      "src/ui/c.ts",
    ]);
    expect((await h.call(globTool, { pattern: "*.js", path: "lib" })).output).toBe("lib/d.js");
    expect((await h.call(globTool, { pattern: "*.rs" })).output).toBe("No files match.");
  });

  it("stops at the limit with a marker", async () => {
    const r = await h.call(globTool, { pattern: "*.ts", limit: 2 });
    expect(r.output.split("\n")).toEqual([
      "src/a.ts",
      "src/ui/c.ts",
      "[stopped at 2 paths; use a narrower pattern or path]",
    ]);
  });
});
