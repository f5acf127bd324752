// An archive project is made only from its creator's own upload, end to end on both databases:
// a real server, a real `--root` runner. The person's upload (POST /api/uploads) becomes a
// project whose workspace holds the archive's files; another person's upload id, an unknown one
// and a malformed one are refused with a clear reason, and no project is left behind.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { startQuiver, type Quiver } from "../app";
import { parseEnv } from "../env";
import type { AppRouter } from "../api/root";
import { spawnRunner, tempDir, TEST_TOKEN, waitFor, type RunnerChild } from "../testing/runner";
import { testDatabases, useTestDb } from "../testing/db";
import { makeTarGz } from "../../runner/workspace/archive-fixtures";

const root = resolve(import.meta.dirname, "../..");
const runnerEnv = { NODE_ENV: "test", QUIVER_SANDBOX: "off" } as const;

describe.each(testDatabases())("archive projects on %s", (provider) => {
  const t = useTestDb(provider);
  let quiver: Quiver;
  let dataDir: string;
  let rootDir: string;
  let runner: RunnerChild | undefined;
  const client = () => createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });

  beforeAll(async () => {
    dataDir = await tempDir("quiver-data-");
    rootDir = await tempDir("quiver-root-");
    const env = parseEnv({
      PORT: "0",
      QUIVER_DATA_DIR: dataDir,
      DATABASE_URL: t.current.url,
      QUIVER_LOCAL_RUNNER: "0",
      QUIVER_RUNNER_TOKEN: TEST_TOKEN,
    });
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
    runner = spawnRunner({
      url: `ws://127.0.0.1:${quiver.port}/runner`,
      workspace: null,
      args: ["--root", rootDir, "--id", "r1"],
      env: runnerEnv,
    });
    await waitFor(() => quiver.services.runners.status().some((r) => r.connected), 30_000, "runner");
    await waitFor(
      async () => (await t.current.db.runnerNode.count({ where: { instanceId: { not: null } } })) === 1,
      10_000,
      "runner recorded",
    );
  }, 90_000);

  afterAll(async () => {
    await runner?.stop();
    await quiver?.stop();
    for (const d of [dataDir, rootDir]) if (d) await rm(d, { recursive: true, force: true });
  });

  it("makes a project from the person's own upload: its workspace holds the archive's files", async () => {
    const archive = makeTarGz([{ name: "src/hello.txt", data: "from the archive" }]);
    const res = await fetch(`${quiver.url}/api/uploads?name=mine.tgz`, {
      method: "POST",
      body: new Uint8Array(archive),
    });
    expect(res.status).toBe(201);
    const { uploadId: id } = (await res.json()) as { uploadId: string };
    const p = await client().projects.create.mutate({ name: "unpacked", source: { kind: "archive", name: id } });
    const ws = p.workspace!.id;
    await waitFor(
      async () => (await t.current.db.workspace.findUnique({ where: { id: ws } }))?.state === "ready",
      30_000,
      "workspace ready",
    );
    expect(readFileSync(join(rootDir, ws, "src/hello.txt"), "utf8")).toBe("from the archive");
  }, 60_000);

  it("refuses another person's upload id, an unknown one and a malformed one; no project is made", async () => {
    // An upload Mallory sent (same org even): its id is no key for anyone else.
    const theirs = `u-${"ab".repeat(12)}`;
    const dir = join(dataDir, "uploads");
    await writeFile(join(dir, `${theirs}.bin`), makeTarGz([{ name: "x.txt", data: "mallory's" }]));
    const owner = await t.current.db.org.findFirstOrThrow();
    await writeFile(
      join(dir, `${theirs}.json`),
      JSON.stringify({
        id: theirs,
        orgId: owner.id,
        userId: "mallory",
        name: "m.tgz",
        bytes: 10,
        format: "tar.gz",
        createdAt: new Date().toISOString(),
      }),
    );
    const trpc = client();
    await expect(
      trpc.projects.create.mutate({ name: "stolen", source: { kind: "archive", name: theirs } }),
    ).rejects.toThrow(/cannot be used: this upload is someone else's/);
    await expect(
      trpc.projects.create.mutate({ name: "guessed", source: { kind: "archive", name: `u-${"cd".repeat(12)}` } }),
    ).rejects.toThrow(/cannot be used: no such upload/);
    await expect(
      trpc.projects.create.mutate({ name: "path", source: { kind: "archive", name: "../../etc/passwd" } }),
    ).rejects.toThrow(/cannot be used: no such upload/);
    expect(await t.current.db.project.count({ where: { name: { in: ["stolen", "guessed", "path"] } } })).toBe(0);
  }, 30_000);
});
