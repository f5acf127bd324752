// A deleted workspace takes its checkpoints with it: the shadow repository (every version of its
// files that a checkpoint kept) lies outside its folder, in QUIVER_CHECKPOINT_DIR, and deleting
// the folder alone left it there for good, one per workspace ever deleted. A real --root runner.
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sandboxInfo } from "../exec/sandbox";
import { FakeServer, outsideTmp, spawnRootRunner, type RootRunner } from "../testing/root";

vi.setConfig({ testTimeout: 90_000, hookTimeout: 120_000 });

describe.runIf(sandboxInfo("auto").available)("deleting a workspace", () => {
  let server: FakeServer;
  let runner: RootRunner;
  let root: string;
  let checkpoints: string;

  beforeAll(async () => {
    root = await outsideTmp("quiver-root-del-");
    checkpoints = await outsideTmp("quiver-ckpt-");
    server = new FakeServer();
    runner = spawnRootRunner(await server.listen(), ["--root", root], { QUIVER_CHECKPOINT_DIR: checkpoints });
    await server.hello();
  });
  afterAll(async () => {
    await runner?.stop();
    await server?.close();
    for (const d of [root, checkpoints]) if (d) rmSync(d, { recursive: true, force: true });
  });

  const shadows = () => readdirSync(checkpoints).filter((n) => n.endsWith(".git"));

  it("removes its shadow repository; another workspace's stays", async () => {
    for (const id of ["gone", "kept"]) {
      expect((await server.request("workspace.create", { workspaceId: id, source: { kind: "empty" } })).ok).toBe(true);
      await server.request("write_file", { path: "a.txt", content: `${id}\n` }, { workspaceId: id });
      const made = await server.request("checkpoint.create", {}, { workspaceId: id });
      expect(made.ok, made.output).toBe(true);
    }
    expect(shadows()).toHaveLength(2);
    const deleted = await server.request("workspace.delete", { workspaceId: "gone" });
    expect(deleted.ok, deleted.output).toBe(true);
    expect(existsSync(join(root, "gone"))).toBe(false);
    expect(shadows()).toHaveLength(1);
    expect((await server.request("checkpoint.create", {}, { workspaceId: "kept" })).ok).toBe(true);
  });
});
