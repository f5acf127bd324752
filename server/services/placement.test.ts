// Placement end to end, on both databases: a real server (no web app), two real `--root` runners
// (one labelled gpu with room for one workspace), projects made over tRPC. Workspaces land where
// labels and capacity say, files land in that runner's folder, a restart of the server and of a
// runner keeps every session where it was, and a gone runner's session fails at once saying which
// runner and since when while its history stays readable.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { startQuiver, type Quiver } from "../app";
import { testServerEnv } from "../testing/env";
import type { AppRouter } from "../api/root";
import { spawnRunner, tempDir, TEST_TOKEN, waitFor, type RunnerChild } from "../testing/runner";
import { testDatabases, useTestDb } from "../testing/db";

const root = resolve(import.meta.dirname, "../..");
// The runners serve many workspaces: without bubblewrap here they would refuse, so unconfined on purpose.
const runnerEnv = { NODE_ENV: "test", QUIVER_SANDBOX: "off" } as const;

describe.each(testDatabases())("placement on %s", (provider) => {
  const t = useTestDb(provider);
  let quiver: Quiver;
  let dataDir: string;
  const dirs: Record<string, string> = {};
  const runners: Record<string, RunnerChild> = {};
  const client = () => createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });

  async function start(): Promise<void> {
    const env = testServerEnv(dataDir, { DATABASE_URL: t.current.url, QUIVER_RUNNER_TOKEN: TEST_TOKEN });
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
  }
  function runner(id: string, args: string[]): RunnerChild {
    runners[id] = spawnRunner({
      url: `ws://127.0.0.1:${quiver.port}/runner`,
      workspace: null,
      args: ["--root", dirs[id], "--id", id, ...args],
      env: runnerEnv,
    });
    return runners[id];
  }
  const live = (id: string) => quiver.services.runners.status().some((r) => r.id === id && r.connected);
  const run = (sessionId: string, op: string, input: unknown) =>
    quiver.services.runners.run({
      sessionId,
      callId: randomUUID(),
      op,
      input,
      deadline: Date.now() + 20_000,
      signal: new AbortController().signal,
    });

  beforeAll(async () => {
    dataDir = await tempDir("quiver-data-");
    dirs.gpu = await tempDir("quiver-root-");
    dirs.plain = await tempDir("quiver-root-");
    await start();
    runner("gpu", ["--label", "gpu", "--capacity", "1"]);
    runner("plain", ["--capacity", "5"]);
    await waitFor(() => live("gpu") && live("plain"), 30_000, "both runners");
    // The registry row is written just after the connection: placement reads the database.
    await waitFor(
      async () => (await t.current.db.runnerNode.count({ where: { instanceId: { not: null } } })) === 2,
      10_000,
      "runners recorded",
    );
  }, 90_000);

  afterAll(async () => {
    for (const r of Object.values(runners)) await r.stop();
    await quiver?.stop();
    for (const d of [dataDir, ...Object.values(dirs)]) if (d) await rm(d, { recursive: true, force: true });
  });

  const ids: Record<string, { project: string; session: string; workspace: string }> = {};

  it("places by labels and capacity, and writes in the placed runner's folder", async () => {
    const trpc = client();
    for (const [name, labels] of [
      ["trained", ["gpu"]],
      ["web", []],
      ["second-gpu", ["gpu"]],
    ] as const) {
      const p = await trpc.projects.create.mutate({ name, source: { kind: "empty" }, runnerLabels: [...labels] });
      const s = await trpc.sessions.create.mutate({ title: name, projectId: p.id });
      ids[name] = { project: p.id, session: s.id, workspace: p.workspace!.id };
    }
    const ws = async (name: string) => t.current.db.workspace.findUniqueOrThrow({ where: { id: ids[name].workspace } });
    // gpu asks for the label; web goes to the least loaded (gpu holds 1 of 1); the second gpu project finds no room.
    expect((await ws("trained")).runnerId).toBe("gpu");
    expect((await ws("web")).runnerId).toBe("plain");
    expect((await ws("second-gpu")).runnerId).toBeNull();

    expect((await run(ids.trained.session, "write_file", { path: "model.txt", content: "weights" })).ok).toBe(true);
    expect((await run(ids.web.session, "write_file", { path: "index.html", content: "<h1>hi</h1>" })).ok).toBe(true);
    expect(readFileSync(join(dirs.gpu, ids.trained.workspace, "model.txt"), "utf8")).toBe("weights");
    expect(readFileSync(join(dirs.plain, ids.web.workspace, "index.html"), "utf8")).toContain("hi");
    expect(existsSync(join(dirs.plain, ids.trained.workspace))).toBe(false);
    await expect(run(ids["second-gpu"].session, "read_file", { path: "x" })).rejects.toThrow(
      /no connected runner can hold/,
    );

    const listed = await trpc.projects.list.query();
    expect(listed.map((p) => p.name)).toEqual(["Default", "second-gpu", "trained", "web"]);
    expect(listed.find((p) => p.name === "web")?.sessions.map((s) => s.id)).toEqual([ids.web.session]);
    const health = (await (await fetch(`${quiver.url}/api/health`)).json()) as {
      runners: Array<{ id: string; workspaces: number }>;
    };
    expect(Object.fromEntries(health.runners.map((r) => [r.id, r.workspaces]))).toEqual({ gpu: 1, plain: 1 });
  }, 60_000);

  it("a gone runner's session fails at once naming it and since when; history stays; it works again when the runner is back", async () => {
    await runners.plain.stop();
    await waitFor(() => !live("plain"), 10_000, "plain gone");
    const began = Date.now();
    await expect(run(ids.web.session, "read_file", { path: "index.html" })).rejects.toThrow(
      /runner plain, which is not connected \(gone since \d{4}-/,
    );
    expect(Date.now() - began).toBeLessThan(1_000);
    const trpc = client();
    await waitFor(
      async () => (await trpc.projects.workspaceOf.query({ sessionId: ids.web.session })).runner?.connected === false,
      5_000,
      "gone in the database",
    );
    const status = await trpc.projects.workspaceOf.query({ sessionId: ids.web.session });
    expect(status.runner).toMatchObject({ id: "plain", connected: false });
    expect(Date.parse(status.runner!.since!)).toBeGreaterThan(began - 10_000);
    expect((await trpc.sessions.get.query({ id: ids.web.session })).title).toBe("web");
    // The other runner's sessions are untouched.
    expect((await run(ids.trained.session, "read_file", { path: "model.txt" })).output).toContain("weights");

    runner("plain", ["--capacity", "5"]);
    await waitFor(() => live("plain"), 30_000, "plain back");
    expect((await run(ids.web.session, "read_file", { path: "index.html" })).output).toContain("hi");
  }, 60_000);

  it("a restarted server finds every session where it was", async () => {
    // The server comes back on another port: the runners are started again to reach it.
    await quiver.stop();
    for (const r of Object.values(runners)) await r.stop();
    await start();
    for (const id of ["gpu", "plain"])
      runner(id, id === "gpu" ? ["--label", "gpu", "--capacity", "1"] : ["--capacity", "5"]);
    await waitFor(() => live("gpu") && live("plain"), 30_000, "runners back after the restart");
    expect((await run(ids.trained.session, "read_file", { path: "model.txt" })).output).toContain("weights");
    expect((await run(ids.web.session, "read_file", { path: "index.html" })).output).toContain("hi");
    const workspaces = await t.current.db.workspace.findMany({
      where: { id: { in: [ids.trained.workspace, ids.web.workspace] } },
    });
    expect(Object.fromEntries(workspaces.map((w) => [w.id, [w.runnerId, w.state]]))).toEqual({
      [ids.trained.workspace]: ["gpu", "ready"],
      [ids.web.workspace]: ["plain", "ready"],
    });
  }, 90_000);

  it("deleting a project removes its workspace folder from its runner and its sessions", async () => {
    const trpc = client();
    const result = await trpc.projects.remove.mutate({ id: ids.web.project });
    expect(result).toEqual({ removed: 1, leftBehind: [] });
    expect(existsSync(join(dirs.plain, ids.web.workspace))).toBe(false);
    expect(await t.current.db.session.count({ where: { id: ids.web.session } })).toBe(0);
    await expect(trpc.projects.remove.mutate({ id: ids.web.project })).rejects.toThrow(/No project/);
  }, 30_000);

  it("a workspace made while no runner had room is placed and made when one with room connects, before any session asks", async () => {
    const waiting = ids["second-gpu"].workspace;
    expect((await t.current.db.workspace.findUniqueOrThrow({ where: { id: waiting } })).runnerId).toBeNull();
    dirs.gpu2 = await tempDir("quiver-root-");
    runner("gpu2", ["--label", "gpu", "--capacity", "1"]);
    await waitFor(
      async () => (await t.current.db.workspace.findUniqueOrThrow({ where: { id: waiting } })).state === "ready",
      30_000,
      "the waiting workspace made on gpu2",
    );
    expect((await t.current.db.workspace.findUniqueOrThrow({ where: { id: waiting } })).runnerId).toBe("gpu2");
    expect(existsSync(join(dirs.gpu2, waiting))).toBe(true);
    const listed = await client().projects.list.query();
    expect(listed.find((p) => p.name === "second-gpu")?.workspace).toMatchObject({ runnerId: "gpu2", state: "ready" });
    // The local owner's kind of workspace (the runner's default folder) is placed only on a runner serving one.
    expect(listed.find((p) => p.name === "Default")?.workspace?.runnerId ?? null).toBeNull();
  }, 60_000);
});
