// A `--root` runner killed -9 while it downloads an uploaded archive for workspace.create: the
// half-made workspace (its staging folder) was already removed at the next start, but the
// download itself, up to 512 MB in the runner's temp folder, stayed there for good. The next
// runner now removes it, and keeps a download named by a process that still runs.
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { tempDir, waitFor } from "../../server/testing/runner";
import { sandboxInfo } from "../exec/sandbox";
import { processMark } from "../pid-alive";
import { FakeServer, spawnRootRunner, type RootRunner } from "../testing/root";

vi.setConfig({ testTimeout: 90_000, hookTimeout: 120_000 });

const MB = 1024 * 1024;

describe.runIf(sandboxInfo("auto").available)("an archive download killed with its runner", () => {
  let server: FakeServer;
  let root: string;
  let tmp: string;
  let url: string;
  const runners: RootRunner[] = [];
  const held: ServerResponse[] = [];

  beforeAll(async () => {
    root = await tempDir("quiver-arch-kill-root-");
    tmp = await tempDir("quiver-arch-kill-tmp-");
    // The upload's GET sends 2 MB and then holds: the runner is mid-download when it is killed.
    server = new FakeServer((req, res) => {
      if (req.method !== "GET" || !req.url?.startsWith("/api/uploads/")) return void res.writeHead(404).end();
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.write(Buffer.alloc(2 * MB, 0x1f));
      held.push(res);
    });
    url = await server.listen();
  });
  afterAll(async () => {
    for (const r of runners) await r.stop();
    for (const res of held) res.destroy();
    await server?.close();
    for (const d of [root, tmp]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it("leaves its download to the next runner, which removes it (and keeps a live process's)", async () => {
    const start = () => {
      const r = spawnRootRunner(url, ["--root", root], { TMPDIR: tmp });
      runners.push(r);
      return r;
    };
    const first = start();
    await server.hello();
    void server
      .request(
        "workspace.create",
        { workspaceId: "w-killed", source: { kind: "archive", uploadId: `u-${"0".repeat(24)}` } },
        { timeoutMs: 60_000 },
      )
      .catch(() => undefined);
    const download = await waitFor(
      () =>
        readdirSync(tmp)
          .filter((n) => n.startsWith("quiver-upload-"))
          .map((n) => join(tmp, n))
          .find((p) => statSync(p).size >= 2 * MB),
      30_000,
      "the runner's download in its temp folder",
    );
    first.child.kill("SIGKILL");
    await first.exited;
    expect(existsSync(download)).toBe(true);
    expect(readdirSync(root).some((n) => n.startsWith(".new-w-killed-"))).toBe(true);
    // A download of a process that runs (this test's) is not a leftover.
    const live = join(tmp, `quiver-upload-${processMark() ?? process.pid}-${randomBytes(8).toString("hex")}`);
    writeFileSync(live, "x");

    const since = server.frames.length;
    start();
    await server.hello(since);
    expect(existsSync(download)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(readdirSync(root).filter((n) => n.startsWith("."))).toEqual([]);
  });
});
