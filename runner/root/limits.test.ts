// A --root workspace's disk limit (workspace.create's diskLimitBytes, workspace.limit): file ops
// past it are refused naming it, a command that ends past it is told so, and the limit is kept
// across a runner restart. The measured way (runner/workspace/disk-limit.ts): no image mounted.
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { tempDir } from "../../server/testing/runner";
import { sandboxInfo } from "../exec/sandbox";
import { FakeServer, spawnRootRunner, type RootRunner } from "../testing/root";

vi.setConfig({ testTimeout: 90_000, hookTimeout: 120_000 });

const MB = 1024 * 1024;

describe.runIf(sandboxInfo("auto").available)("a --root workspace's disk limit", () => {
  let server: FakeServer;
  let runner: RootRunner;
  let root: string;
  let url: string;

  beforeAll(async () => {
    root = await tempDir("quiver-root-limit-");
    server = new FakeServer();
    url = await server.listen();
    runner = spawnRootRunner(url, ["--root", root]);
    await server.hello();
  });
  afterAll(async () => {
    await runner?.stop();
    await server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("refuses writes past it, tells a command that passed it, and keeps it across a restart", async () => {
    const made = await server.request("workspace.create", {
      workspaceId: "w",
      source: { kind: "empty" },
      diskLimitBytes: 2 * MB,
    });
    expect(JSON.parse(made.output)).toMatchObject({ id: "w", diskLimitBytes: 2 * MB });
    expect(
      (await server.request("write_file", { path: "small.txt", content: "x".repeat(1000) }, { workspaceId: "w" })).ok,
    ).toBe(true);
    const cmd = await server.request(
      "shell",
      { command: "head -c 3000000 /dev/zero > big.bin; echo wrote" },
      { workspaceId: "w" },
    );
    expect(cmd.output).toMatch(/disk limit of 2(\.0)? MB is reached/);
    const refused = await server.request(
      "write_file",
      { path: "more.txt", content: "y".repeat(1000) },
      { workspaceId: "w" },
    );
    expect(refused).toMatchObject({ ok: false, output: expect.stringMatching(/disk limit of 2(\.0)? MB/) });

    const before = server.frames.length;
    await runner.stop();
    runner = spawnRootRunner(url, ["--root", root]);
    await server.hello(before);
    expect(
      (await server.request("write_file", { path: "more.txt", content: "y".repeat(1000) }, { workspaceId: "w" })).ok,
    ).toBe(false);
    const raised = await server.request("workspace.limit", { workspaceId: "w", diskLimitBytes: 8 * MB });
    expect(JSON.parse(raised.output)).toMatchObject({ diskLimitBytes: 8 * MB });
    expect(
      (await server.request("write_file", { path: "more.txt", content: "y".repeat(1000) }, { workspaceId: "w" })).ok,
    ).toBe(true);
    expect((await server.request("workspace.limit", { workspaceId: "nope", diskLimitBytes: 8 * MB })).ok).toBe(false);
  });
});
