// A --root runner given a --workspace folder too (the embedded `npm start`): that folder is the
// default workspace, served in place for requests naming none or "default", never deleted, and
// kept apart from the workspaces under the root both ways.
import { rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sandboxInfo } from "../exec/sandbox";
import { FakeServer, outsideTmp, spawnRootRunner, type RootRunner } from "../testing/root";

vi.setConfig({ testTimeout: 90_000, hookTimeout: 120_000 });

describe.runIf(sandboxInfo("auto").available)("the default workspace next to --root", () => {
  let server: FakeServer;
  let runner: RootRunner;
  let root: string;
  let own: string;

  beforeAll(async () => {
    root = await outsideTmp("quiver-root-def-");
    own = await outsideTmp("quiver-own-");
    await writeFile(join(own, "mine.txt"), "own-secret\n");
    server = new FakeServer();
    runner = spawnRootRunner(await server.listen(), ["--root", root, "--workspace", own]);
  });
  afterAll(async () => {
    await runner?.stop();
    await server?.close();
    for (const d of [root, own]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it("is served in place, listed in hello, never deleted, and apart from the root's workspaces", async () => {
    const hello = await server.hello();
    expect(hello.workspace).toBe(own);
    expect(hello.workspaces).toEqual([{ id: "default", bytesUsed: expect.any(Number), default: true }]);
    expect(hello.workspaces![0].bytesUsed).toBeGreaterThan(0);
    expect((await server.request("read_file", { path: "mine.txt" })).output).toContain("own-secret");
    expect((await server.request("read_file", { path: "mine.txt" }, { workspaceId: "default" })).output).toContain(
      "own-secret",
    );
    expect(await server.request("workspace.delete", { workspaceId: "default" })).toMatchObject({
      ok: false,
      output: expect.stringMatching(/never deletes/),
    });
    expect((await server.request("workspace.create", { workspaceId: "a", source: { kind: "empty" } })).ok).toBe(true);
    await server.request("write_file", { path: "a.txt", content: "a-secret\n" }, { workspaceId: "a" });
    const fromA = await server.shell("a", `cat ${own}/mine.txt; echo "cat=$?"`);
    expect(fromA).not.toContain("own-secret");
    expect(fromA).toMatch(/cat=1/);
    const fromDefault = (
      await server.request("shell", { command: `cat ${root}/a/a.txt; echo "cat=$?"; ls -A ${root} | wc -l` })
    ).output;
    expect(fromDefault).not.toContain("a-secret");
    expect(fromDefault).toMatch(/cat=1\n0\n/);
  });
});
