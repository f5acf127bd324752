// The org's disk limit reaching the runners, on both databases: a real server, a real `--root`
// runner. A workspace placed after an admin set the limit is created with it (a write past it is
// refused naming it), a change reaches the connected runner before setDiskLimit answers, and a
// change made while the runner was away reaches it when it connects again.
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

describe.each(testDatabases())("org disk limit on the runners on %s", (provider) => {
  const t = useTestDb(provider);
  let quiver: Quiver;
  let dataDir: string;
  let rootDir: string;
  let runner: RunnerChild | undefined;
  const client = () => createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });
  const live = () => quiver.services.runners.status().some((r) => r.id === "r1" && r.connected);
  const startRunner = () =>
    (runner = spawnRunner({
      url: `ws://127.0.0.1:${quiver.port}/runner`,
      workspace: null,
      args: ["--root", rootDir, "--id", "r1"],
      env: runnerEnv,
    }));
  const limitOnRunner = async (workspaceId: string) =>
    (
      JSON.parse((await quiver.services.runners.runOn("r1", "workspace.usage", { workspaceId })).output) as {
        diskLimitBytes?: number;
      }
    ).diskLimitBytes;
  let session = "";
  let workspace = "";

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
    startRunner();
    await waitFor(live, 30_000, "runner");
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

  it("a workspace placed after the limit was set is created with it: a write past it is refused naming it", async () => {
    const trpc = client();
    await trpc.uploads.setDiskLimit.mutate({ limitMb: 1 });
    const p = await trpc.projects.create.mutate({ name: "small", source: { kind: "empty" } });
    workspace = p.workspace!.id;
    session = (await trpc.sessions.create.mutate({ title: "small", projectId: p.id })).id;
    await waitFor(
      async () => (await t.current.db.workspace.findUnique({ where: { id: workspace } }))?.state === "ready",
      20_000,
      "workspace ready",
    );
    expect(await limitOnRunner(workspace)).toBe(1 * MB);
    const write = await quiver.services.runners.run({
      sessionId: session,
      callId: randomUUID(),
      op: "write_file",
      input: { path: "big.bin", content: "x".repeat(1.5 * MB) },
      deadline: Date.now() + 20_000,
      signal: new AbortController().signal,
    });
    expect(write.ok).toBe(false);
    expect(write.output).toMatch(/disk limit of 1(\.0)? MB/);
  }, 60_000);

  it("an admin's change reaches the connected runner before the answer; a change made while it was away, when it is back", async () => {
    const trpc = client();
    await trpc.uploads.setDiskLimit.mutate({ limitMb: 2 });
    expect(await limitOnRunner(workspace)).toBe(2 * MB);

    await runner!.stop();
    await waitFor(() => !live(), 10_000, "runner gone");
    await trpc.uploads.setDiskLimit.mutate({ limitMb: 3 });
    startRunner();
    await waitFor(live, 30_000, "runner back");
    await waitFor(async () => (await limitOnRunner(workspace)) === 3 * MB, 10_000, "the limit set while away");

    // Back to the default (5 GB): sent as such, not lifted.
    await trpc.uploads.setDiskLimit.mutate({ limitMb: null });
    expect(await limitOnRunner(workspace)).toBe(5 * 1024 * MB);
  }, 90_000);
});
