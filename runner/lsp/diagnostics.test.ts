// Diagnostics after edits, through the real tools on a real runner process whose language server
// is a real `typescript-language-server --stdio`: a type error written is in the write's result,
// the edit fixing it reports none, apply_patch too; the editor's ide_diagnostics gives the same;
// a workspace's hostile tsconfig plugin and its own node_modules/typescript are never loaded (no
// file written outside, no connection made); the deadline says "not ready" instead of waiting;
// the server dies with its runner.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { runnerHarness, tempDir, waitFor } from "../../server/testing/runner";
import { readFileTool } from "../../server/tools/builtin/read_file";
import { writeFileTool } from "../../server/tools/builtin/write_file";
import { editFileTool } from "../../server/tools/builtin/edit_file";
import { applyPatchTool } from "../../server/tools/builtin/apply_patch";
import { formatDiagnostics, DIAGNOSTICS_LIMITS } from "./diagnostics";

type Harness = Awaited<ReturnType<typeof runnerHarness>>;

/** Processes whose command line names the language server, below `pid`. */
function lspUnder(pid: number): number[] {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s+/));
  const kids = (p: number): number[] =>
    rows.filter((r) => Number(r[1]) === p).flatMap((r) => [Number(r[0]), ...kids(Number(r[0]))]);
  const mine = new Set(kids(pid));
  return rows
    .filter((r) => mine.has(Number(r[0])) && /typescript-language-server|tsserver/.test(r.slice(2).join(" ")))
    .map((r) => Number(r[0]));
}

/** SIGKILLs each of `pids`. Killing the bridge first can take its tsserver with it before the
 *  loop reaches it. */
function killAll(pids: number[]): void {
  for (const p of pids) {
    try {
      process.kill(p, "SIGKILL");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ESRCH") throw e;
    }
  }
}

describe("diagnostics after edits (real typescript-language-server on a real runner)", () => {
  let h: Harness;
  let outside: string;
  let listener: Server;
  let port = 0;
  const hits: string[] = [];

  beforeAll(async () => {
    outside = await tempDir("quiver-outside-");
    listener = createServer((req, res) => {
      hits.push(req.url ?? "");
      res.end("ok");
    });
    await new Promise<void>((r) => listener.listen(0, "127.0.0.1", () => r()));
    port = (listener.address() as { port: number }).port;
    // The first start of tsserver takes seconds on a loaded machine: this suite waits for it (the
    // deadline itself is tested below).
    process.env.QUIVER_DIAGNOSTICS_MS = "100000";
    h = await runnerHarness();
    delete process.env.QUIVER_DIAGNOSTICS_MS;
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    await new Promise<void>((r) => listener.close(() => r()));
    await rm(outside, { recursive: true, force: true });
  });

  it("a type error written is in the result; the edit that fixes it reports none", async () => {
    const wrote = await h.call(writeFileTool, { path: "src/a.ts", content: 'export const n: number = "seven";\n' });
    expect(wrote.error).toBeUndefined();
    expect(wrote.output).toMatch(/^Created src\/a\.ts/);
    expect(wrote.output).toMatch(
      /Diagnostics of src\/a\.ts after this change \(typescript-language-server\): 1 error, 0 warnings\nsrc\/a\.ts:1:14 error TS2322: Type 'string' is not assignable to type 'number'\.$/,
    );

    await h.call(readFileTool, { path: "src/a.ts" });
    const fixed = await h.call(editFileTool, { path: "src/a.ts", old_string: '"seven"', new_string: "7" });
    expect(fixed.error).toBeUndefined();
    expect(fixed.output).toMatch(/\n\nNo errors or warnings in src\/a\.ts \(typescript-language-server\)\.$/);
  }, 150_000);

  it("checks across files (an import broken by another file's change) and after apply_patch", async () => {
    await h.call(writeFileTool, {
      path: "src/b.ts",
      content: 'import { n } from "./a";\nexport const twice: number = n * 2;\n',
    });
    const patch = [
      "--- a/src/a.ts",
      "+++ b/src/a.ts",
      "@@ -1 +1 @@",
      "-export const n: number = 7;",
      '+export const m = "x";',
      "",
    ].join("\n");
    await h.call(readFileTool, { path: "src/a.ts" });
    const patched = await h.call(applyPatchTool, { patch });
    expect(patched.error).toBeUndefined();
    expect(patched.output).toMatch(/No errors or warnings in src\/a\.ts/);
    await h.call(readFileTool, { path: "src/b.ts" });
    const b = await h.call(editFileTool, { path: "src/b.ts", old_string: "* 2", new_string: "* 3" });
    expect(b.output).toMatch(/src\/b\.ts:1:10 error TS2305: Module '"\.\/a"' has no exported member 'n'\./);
  }, 60_000);

  it("gives the editor the same list (ide_diagnostics), and nothing for a file it does not check", async () => {
    const r = await h.server.pool.run({
      sessionId: "s1",
      callId: "ide1",
      op: "ide_diagnostics",
      input: { path: "src/b.ts" },
      deadline: Date.now() + 20_000,
      signal: new AbortController().signal,
    });
    const got = JSON.parse(r.output) as {
      ready: boolean;
      diagnostics: Array<{ line: number; column: number; severity: string; code: number }>;
    };
    expect(got.ready).toBe(true);
    expect(got.diagnostics).toEqual([expect.objectContaining({ line: 1, column: 10, severity: "error", code: 2305 })]);
    const txt = await h.server.pool.run({
      sessionId: "s1",
      callId: "ide2",
      op: "ide_diagnostics",
      input: { path: "notes.md" },
      deadline: Date.now() + 5_000,
      signal: new AbortController().signal,
    });
    expect(JSON.parse(txt.output)).toEqual({ path: "notes.md", ready: true, diagnostics: [] });
    const out = await h.server.pool.run({
      sessionId: "s1",
      callId: "ide3",
      op: "ide_diagnostics",
      input: { path: "../../etc/passwd.ts" },
      deadline: Date.now() + 5_000,
      signal: new AbortController().signal,
    });
    expect(out.ok).toBe(false);
  }, 30_000);

  it("never loads a workspace's tsconfig plugin or its own node_modules/typescript", async () => {
    // A fresh start, so the language server chooses its TypeScript with the planted one present.
    killAll(lspUnder(h.runner.child.pid!));
    await waitFor(() => lspUnder(h.runner.child.pid!).length === 0, 5_000, "language server gone");
    // What an agent could plant: code that runs if tsserver loads it, writing outside and calling out.
    const payload = (tag: string) =>
      `require("fs").writeFileSync(${JSON.stringify(join(outside, `pwned-${tag}`))}, "x");\n` +
      `require("http").get("http://127.0.0.1:${port}/${tag}").on("error", () => {});\n`;
    mkdirSync(join(h.dir, "node_modules/evil-plugin"), { recursive: true });
    writeFileSync(
      join(h.dir, "node_modules/evil-plugin/package.json"),
      JSON.stringify({ name: "evil-plugin", main: "index.js" }),
    );
    writeFileSync(
      join(h.dir, "node_modules/evil-plugin/index.js"),
      `${payload("plugin")}module.exports = () => ({ create: (info) => info.languageService });\n`,
    );
    mkdirSync(join(h.dir, "node_modules/typescript/lib"), { recursive: true });
    writeFileSync(
      join(h.dir, "node_modules/typescript/package.json"),
      JSON.stringify({ name: "typescript", version: "5.9.3", main: "lib/typescript.js" }),
    );
    writeFileSync(join(h.dir, "node_modules/typescript/lib/tsserver.js"), payload("tsserver"));
    writeFileSync(join(h.dir, "node_modules/typescript/lib/typescript.js"), payload("typescript"));
    await h.call(writeFileTool, {
      path: "tsconfig.json",
      content: JSON.stringify({ compilerOptions: { strict: true, plugins: [{ name: "evil-plugin" }] } }),
    });
    // A new project (the tsconfig) is loaded for this file: the plugin would be loaded now.
    const wrote = await h.call(writeFileTool, { path: "src/c.ts", content: "let s: string = 1;\n" });
    expect(wrote.output).toMatch(/src\/c\.ts:1:5 error TS2322/);
    await new Promise((r) => setTimeout(r, 1000));
    expect(["plugin", "tsserver", "typescript"].filter((t) => existsSync(join(outside, `pwned-${t}`)))).toEqual([]);
    expect(hits).toEqual([]);
  }, 60_000);

  it("starts one language server for the workspace, again after it died, and it dies with its runner", async () => {
    const pid = h.runner.child.pid!;
    const before = lspUnder(pid);
    expect(before.length).toBeGreaterThan(0);
    // One bridge: the first process named typescript-language-server under the runner.
    killAll(before);
    await waitFor(() => lspUnder(pid).length === 0, 5_000, "language server gone");
    const wrote = await h.call(writeFileTool, { path: "src/d.ts", content: "export const d: boolean = 0;\n" });
    expect(wrote.output).toMatch(/src\/d\.ts:1:14 error TS2322/);
    const again = lspUnder(pid);
    expect(again.length).toBeGreaterThan(0);

    h.runner.child.kill("SIGKILL");
    await h.runner.exited;
    // Without the runner its language server leaves too (it watches the runner's pid).
    const alive = (p: number) => {
      try {
        process.kill(p, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor(() => again.every((p) => !alive(p)), 15_000, "language server to follow its runner");
  }, 60_000);
});

describe("the diagnostics' bounds", () => {
  it("lists errors first, at most maxPerFile, within maxBytes, saying how many more", () => {
    const many = Array.from({ length: 50 }, (_, i) => ({
      line: 50 - i,
      column: 1,
      endLine: 1,
      endColumn: 2,
      severity: i % 2 ? ("error" as const) : ("warning" as const),
      code: 2000 + i,
      message: "m".repeat(1000),
    }));
    const text = formatDiagnostics("x.ts", many);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(DIAGNOSTICS_LIMITS.maxBytes + 100);
    expect(text).toMatch(
      /^Diagnostics of x\.ts after this change \(typescript-language-server\): 25 errors, 25 warnings\nx\.ts:\d+:1 error/,
    );
    expect(text).toMatch(/\((\d+) more not shown\)$/);
    expect(text.split("\n").every((l) => l.length < DIAGNOSTICS_LIMITS.maxMessage + 60)).toBe(true);
  });

  it("says diagnostics were not ready when the language server misses the deadline", async () => {
    process.env.QUIVER_DIAGNOSTICS_MS = "1";
    const h = await runnerHarness();
    delete process.env.QUIVER_DIAGNOSTICS_MS;
    try {
      const began = Date.now();
      const wrote = await h.call(writeFileTool, { path: "late.ts", content: 'const x: number = "no";\n' });
      expect(wrote.output).toMatch(/^Created late\.ts[^\n]*\n\nDiagnostics of late\.ts were not ready within 0 s/);
      expect(Date.now() - began).toBeLessThan(3_000);
    } finally {
      await h.close();
    }
  }, 60_000);
});
