// A real server on the test database with one real `--root` runner ("r1", unsandboxed) connected
// and recorded, for the suites that drive workspaces end to end through tRPC. Owns both
// processes and their temp folders; the runner can be stopped and started again mid-suite.
import { afterAll, beforeAll } from "vitest";
import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { startQuiver, type Quiver } from "../app";
import { testServerEnv } from "./env";
import type { AppRouter } from "../api/root";
import { spawnRunner, tempDir, TEST_TOKEN, waitFor, waitForRunner, type RunnerChild } from "./runner";
import type { TestDb } from "./db";

const root = resolve(import.meta.dirname, "../..");
const runnerEnv = { NODE_ENV: "test", QUIVER_SANDBOX: "off" } as const;

export interface RootRunnerServer {
  readonly quiver: Quiver;
  readonly dataDir: string;
  readonly rootDir: string;
  /** A tRPC client as the loopback owner. */
  client(): ReturnType<typeof createTRPCClient<AppRouter>>;
  /** The runner is connected to the server. */
  live(): boolean;
  startRunner(): void;
  stopRunner(): Promise<void>;
}

export function useRootRunnerServer(t: { readonly current: TestDb }): RootRunnerServer {
  let quiver: Quiver | undefined;
  let dataDir = "";
  let rootDir = "";
  let runner: RunnerChild | undefined;
  const started = () => {
    if (!quiver) throw new Error("the server is not started yet (use it inside a test)");
    return quiver;
  };
  const server: RootRunnerServer = {
    get quiver() {
      return started();
    },
    get dataDir() {
      return dataDir;
    },
    get rootDir() {
      return rootDir;
    },
    client: () => createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${started().url}/api/trpc` })] }),
    live: () =>
      started()
        .services.runners.status()
        .some((r) => r.id === "r1" && r.connected),
    startRunner() {
      runner = spawnRunner({
        url: `ws://127.0.0.1:${started().port}/runner`,
        workspace: null,
        args: ["--root", rootDir, "--id", "r1"],
        env: runnerEnv,
      });
    },
    async stopRunner() {
      await runner?.stop();
      runner = undefined;
    },
  };

  beforeAll(async () => {
    dataDir = await tempDir("quiver-data-");
    rootDir = await tempDir("quiver-root-");
    const env = testServerEnv(dataDir, { DATABASE_URL: t.current.url, QUIVER_RUNNER_TOKEN: TEST_TOKEN });
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
    server.startRunner();
    await waitForRunner(() => runner, server.live, 30_000, "runner");
    await waitFor(
      async () => (await t.current.db.runnerNode.count({ where: { instanceId: { not: null } } })) === 1,
      10_000,
      "runner recorded",
    );
  }, 90_000);

  afterAll(async () => {
    await server.stopRunner();
    await quiver?.stop();
    for (const d of [dataDir, rootDir]) if (d) await rm(d, { recursive: true, force: true });
  });

  return server;
}
