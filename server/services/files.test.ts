// The IDE's file service against a real runner process on a real temp workspace, through the pool.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnRunner, startServer, waitFor, type RunnerChild, type TestServer } from "../testing/runner";
import { createFileService, FileOpError, parseListing, parseSearch, type FileService } from "./files";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

let server: TestServer;
let runner: RunnerChild;
let dir: string;
let files: FileService;
const changes: string[][] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "quiver-files-"));
  await writeFile(join(dir, "README.md"), "# hello\n");
  await writeFile(join(dir, ".gitignore"), "node_modules/\n");
  server = await startServer();
  server.pool.onFilesChanged((e) => changes.push(e.paths));
  runner = spawnRunner({ url: server.url, workspace: dir });
  await waitFor(() => server.pool.status().some((r) => r.connected), 20_000, "runner");
  files = createFileService(server.pool);
}, 30_000);
afterAll(async () => {
  await runner?.stop();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("file service over a real runner", () => {
  it("lists, creates, saves, renames and deletes, announcing each change", async () => {
    await files.mkdir("s1", "src");
    await files.save("s1", "src/a.ts", "export const a = 1;\n", null);
    const tree = await files.tree("s1");
    expect(tree.entries).toEqual(
      expect.arrayContaining([
        { path: "README.md", type: "file" },
        { path: "src", type: "dir" },
        { path: "src/a.ts", type: "file" },
      ]),
    );
    const opened = await files.read("s1", "src/a.ts");
    expect(opened).toEqual({ path: "src/a.ts", content: "export const a = 1;\n", hash: sha("export const a = 1;\n") });
    const saved = await files.save("s1", "src/a.ts", "export const a = 2;\n", opened.hash);
    expect(saved.hash).toBe(sha("export const a = 2;\n"));
    await files.rename("s1", "src/a.ts", "src/b.ts");
    expect(await readFile(join(dir, "src/b.ts"), "utf8")).toBe("export const a = 2;\n");
    await files.remove("s1", "src");
    expect((await files.tree("s1")).entries.map((e) => e.path)).not.toContain("src/b.ts");
    await waitFor(() => changes.flat().includes("src/b.ts"), 5000, "files.changed");
  });

  it("lists one folder's own entries for the tree, says when the folder is not there, and finds files by their path", async () => {
    await files.mkdir("s1", "pkg/deep");
    await files.save("s1", "pkg/deep/x.ts", "x\n", null);
    await files.save("s1", "pkg/index.ts", "i\n", null);
    expect(await files.tree("s1", "pkg")).toEqual({
      entries: [
        { path: "pkg/deep", type: "dir" },
        { path: "pkg/index.ts", type: "file" },
      ],
      truncated: false,
    });
    await expect(files.tree("s1", "nope")).rejects.toMatchObject({ kind: "not_found" });
    await expect(files.tree("s1", "pkg/index.ts")).rejects.toMatchObject({ kind: "invalid" });
    await expect(files.tree("s1", "../..")).rejects.toMatchObject({ kind: "invalid" });
    expect(await files.find("s1", "deepx")).toEqual({ paths: ["pkg/deep/x.ts"], truncated: false });
  });

  it("refuses a stale save with a conflict that carries the current hash, and paths outside the workspace", async () => {
    const opened = await files.read("s1", "README.md");
    await writeFile(join(dir, "README.md"), "# changed by the agent\n");
    const err = await files.save("s1", "README.md", "# mine\n", opened.hash).catch((e) => e);
    expect(err).toBeInstanceOf(FileOpError);
    expect(err).toMatchObject({ kind: "conflict", currentHash: sha("# changed by the agent\n") });
    expect(await readFile(join(dir, "README.md"), "utf8")).toBe("# changed by the agent\n");
    await expect(files.read("s1", "../etc/passwd")).rejects.toMatchObject({ kind: "invalid" });
    await expect(files.read("s1", "missing.txt")).rejects.toMatchObject({ kind: "not_found" });
  });

  it("searches the workspace by text or regex, grouped by file, honouring .gitignore and globs", async () => {
    await files.save("s1", "lib/one.ts", "const Alpha = 1;\nconst beta = alpha + 1;\n", null);
    await files.save("s1", "lib/two.md", "alpha: with a colon: here\n", null);
    await files.save("s1", "node_modules/x/index.js", "alpha\n", null);
    expect(await files.search("s1", { query: "alpha" })).toEqual({
      files: [
        {
          path: "lib/one.ts",
          matches: [
            { line: 1, text: "const Alpha = 1;" },
            { line: 2, text: "const beta = alpha + 1;" },
          ],
        },
        { path: "lib/two.md", matches: [{ line: 1, text: "alpha: with a colon: here" }] },
      ],
      matches: 3,
      truncated: false,
    });
    // Capitals make it exact (smart case); caseSensitive false does not.
    expect((await files.search("s1", { query: "Alpha" })).matches).toBe(1);
    expect((await files.search("s1", { query: "ALPHA", caseSensitive: false })).matches).toBe(3);
    expect((await files.search("s1", { query: "alpha", glob: "*.md" })).files.map((f) => f.path)).toEqual([
      "lib/two.md",
    ]);
    expect((await files.search("s1", { query: "be+ta\\s*=", regex: true })).files.map((f) => f.path)).toEqual([
      "lib/one.ts",
    ]);
    // A literal search treats regex syntax as text.
    expect((await files.search("s1", { query: "be+ta" })).matches).toBe(0);
    await expect(files.search("s1", { query: "(unclosed", regex: true })).rejects.toMatchObject({
      kind: "invalid",
      message: expect.stringMatching(/unclosed|regex/i),
    });
    await files.remove("s1", "lib");
    await files.remove("s1", "node_modules");
  });

  it("parses search output with the truncation note", () => {
    expect(parseSearch("No matches.")).toEqual({ files: [], matches: 0, truncated: false });
    expect(
      parseSearch("a.ts:3:x\na.ts:9:y:z\nb/c.ts:1:\n[results stopped at 2 matching lines; narrow the pattern]"),
    ).toEqual({
      files: [
        {
          path: "a.ts",
          matches: [
            { line: 3, text: "x" },
            { line: 9, text: "y:z" },
          ],
        },
        { path: "b/c.ts", matches: [{ line: 1, text: "" }] },
      ],
      matches: 3,
      truncated: true,
    });
  });

  it("parses listings with links and the truncation note", () => {
    expect(parseListing("a/\na/b.ts\nl@\n[listing stopped at 2 entries; give a narrower path]")).toEqual({
      entries: [
        { path: "a", type: "dir" },
        { path: "a/b.ts", type: "file" },
        { path: "l", type: "link" },
      ],
      truncated: true,
    });
  });
});
