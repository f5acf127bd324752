// files.usage on both databases, through tRPC against a real server and a real `--root` runner:
// a session's workspace reports the bytes its files take and the org's limit; a file written
// raises the figure, the limit follows an admin's change; a runner's own `--workspace` folder
// (the embedded default) has no limit; a session with no runner is refused as unavailable.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import { randomUUID } from "node:crypto";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { startQuiver, type Quiver } from "../app";
import { parseEnv } from "../env";
import type { AppRouter } from "../api/root";
import { spawnRunner, tempDir, TEST_TOKEN, waitFor, type RunnerChild } from "../testing/runner";
import { testDatabases, useTestDb } from "../testing/db";

const root = resolve(import.meta.dirname, "../..");
const runnerEnv = { NODE_ENV: "test", QUIVER_SANDBOX: "off" } as const;
const MB = 1024 ** 2;

describe.each(testDatabases())("files.usage on %s", (provider) => {
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

  it("reports the workspace's bytes and the org's limit, and follows writes and changes of the limit", async () => {
    const trpc = client();
    await trpc.uploads.setDiskLimit.mutate({ limitMb: 16 });
    const p = await trpc.projects.create.mutate({ name: "measured", source: { kind: "empty" } });
    const sessionId = (await trpc.sessions.create.mutate({ title: "m", projectId: p.id })).id;
    await waitFor(
      async () => (await t.current.db.workspace.findUnique({ where: { id: p.workspace!.id } }))?.state === "ready",
      20_000,
      "workspace ready",
    );

    const before = await trpc.files.usage.query({ sessionId });
    expect(before).toMatchObject({ limitBytes: 16 * MB });
    expect(before!.usedBytes).toBeLessThan(256 * 1024);
    expect(before!.freeDiskBytes).toBeGreaterThan(0);

    const write = await quiver.services.runners.run({
      sessionId,
      callId: randomUUID(),
      op: "write_file",
      input: { path: "data.txt", content: "y".repeat(MB) },
      deadline: Date.now() + 20_000,
      signal: new AbortController().signal,
    });
    expect(write.ok).toBe(true);
    // The runner trusts a measured total for a moment; the write is counted by then.
    await waitFor(
      async () => ((await trpc.files.usage.query({ sessionId }))?.usedBytes ?? 0) >= MB,
      10_000,
      "usage grows",
    );

    await trpc.uploads.setDiskLimit.mutate({ limitMb: 32 });
    expect((await trpc.files.usage.query({ sessionId }))?.limitBytes).toBe(32 * MB);
  }, 60_000);

  it("refuses a session whose workspace has no runner, as unavailable", async () => {
    const trpc = client();
    const p = await trpc.projects.create.mutate({
      name: "nowhere",
      source: { kind: "empty" },
      runnerLabels: ["no-such-label"],
    });
    const sessionId = (await trpc.sessions.create.mutate({ title: "n", projectId: p.id })).id;
    await expect(trpc.files.usage.query({ sessionId })).rejects.toThrow(/no connected runner can hold/);
  }, 30_000);
});
