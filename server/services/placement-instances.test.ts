// Two server instances on one PostgreSQL database (each a full set of parts, as in
// multi-instance.test.ts), each holding one real `--root` runner: both place the same (project,
// person) at once many times over and get the one workspace the database kept; both see the
// other's runner in the registry, and both locate a session on the same runner and workspace.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { rm } from "node:fs/promises";
import { openInstance } from "../testing/instance";
import { testDatabases, useTestDb } from "../testing/db";
import { startFakeProvider, type FakeProvider } from "../engine/fake-provider/server";
import { ensureLocalActor } from "./local-user";
import { spawnRunner, tempDir, waitFor, type RunnerChild } from "../testing/runner";
import type { Parts } from "../parts";
import type { DbHandle } from "../db";

const hasPostgres = testDatabases().includes("postgresql");
const TOKEN = "x".repeat(32); // what testing/instance.ts gives every instance

describe.skipIf(!hasPostgres)("placement across two server instances on PostgreSQL", () => {
  const t = useTestDb("postgresql");
  let fake: FakeProvider;
  const instances: Array<{ parts: Parts; handle: DbHandle; http: Server; port: number }> = [];
  const runners: RunnerChild[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    fake = await startFakeProvider();
    for (const name of ["a", "b"]) {
      const dataDir = await tempDir("quiver-data-");
      dirs.push(dataDir);
      const { parts, handle } = await openInstance(t.current.url, {
        anthropicBaseURL: fake.anthropicBaseURL,
        dataDir,
        log: () => {},
      });
      const http = createServer((_q, r) => r.writeHead(404).end());
      http.on("upgrade", (req, socket, head) => parts.services.runners.handleUpgrade(req, socket, head));
      await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()));
      const port = (http.address() as { port: number }).port;
      instances.push({ parts, handle, http, port });
      const rootDir = await tempDir("quiver-root-");
      dirs.push(rootDir);
      runners.push(
        spawnRunner({
          url: `ws://127.0.0.1:${port}/runner`,
          workspace: null,
          token: TOKEN,
          args: ["--root", rootDir, "--id", `runner-${name}`, "--capacity", "4"],
          env: { NODE_ENV: "test", QUIVER_SANDBOX: "off" },
        }),
      );
    }
    await waitFor(
      async () => (await t.current.db.runnerNode.count({ where: { instanceId: { not: null } } })) === 2,
      40_000,
      "both runners recorded",
    );
  }, 120_000);

  afterAll(async () => {
    for (const r of runners) await r.stop();
    for (const i of instances) {
      await i.parts.dispose();
      i.http.closeAllConnections();
      await new Promise<void>((resolve) => i.http.close(() => resolve()));
      await i.handle.close();
    }
    await fake?.close();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it("each instance sees both runners, held by different instances", async () => {
    const [a, b] = instances.map((i) => i.parts.services.runnerRegistry);
    const fromA = await a.list();
    const fromB = await b.list();
    expect(fromA.map((r) => [r.id, r.live])).toEqual([
      ["runner-a", true],
      ["runner-b", true],
    ]);
    expect(fromB.map((r) => r.instanceId)).toEqual(fromA.map((r) => r.instanceId));
    expect(new Set(fromA.map((r) => r.instanceId)).size).toBe(2);
  });

  it("placing the same (project, person) on both instances at once keeps one workspace, and both locate it alike", async () => {
    const actor = await ensureLocalActor(t.current.db);
    const project = await t.current.db.project.create({
      data: { orgId: actor.orgId, name: "raced", createdById: actor.userId },
    });
    const [pa, pb] = instances.map((i) => i.parts.services.placement);
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, n) => (n % 2 ? pa : pb).ensureWorkspace(project.id, actor.userId)),
    );
    expect(new Set(results.map((w) => w.id)).size).toBe(1);
    expect(new Set(results.map((w) => w.runnerId)).size).toBe(1);
    expect(await t.current.db.workspace.count({ where: { projectId: project.id } })).toBe(1);

    const ws = results[0];
    const holder = instances[ws.runnerId === "runner-a" ? 0 : 1];
    // The instance holding the runner makes the folder (at its next renewal, or when asked).
    await holder.parts.services.placement.createPending([ws.runnerId!]);
    await waitFor(
      async () => (await t.current.db.workspace.findUnique({ where: { id: ws.id } }))?.state === "ready",
      20_000,
      "workspace made",
    );
    const places = await Promise.all([pa.locate(ws.id), pb.locate(ws.id)]);
    expect(places[0]).toEqual({ runnerId: ws.runnerId, workspaceId: ws.id });
    expect(places[1]).toEqual(places[0]);
  }, 60_000);
});
