// The embedded default after projects came: a data folder from before (sessions with no project
// or workspace, files in ./workspace) started with `npm start`'s setup — one spawned local runner
// (--workspace <data>/workspace --root <data>/workspaces). Every old session is in the Default
// project, works in the same folder and sees its files; a new project's session works in a
// folder of its own under the root and cannot see them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { startQuiver, type Quiver } from "../app";
import { parseEnv } from "../env";
import { openDb } from "../db";
import type { AppRouter } from "../api/root";
import { tempDir, waitFor } from "../testing/runner";
import { ensureLocalActor } from "./local-user";

const root = resolve(import.meta.dirname, "../..");

describe("a data folder from before projects, started embedded", () => {
  let dataDir: string;
  let quiver: Quiver;
  const old: string[] = [];

  beforeAll(async () => {
    dataDir = await tempDir("quiver-data-");
    // As the previous version left it: sessions of the local owner with no workspace, files in ./workspace.
    const handle = await openDb(`file:${join(dataDir, "quiver.db")}`);
    const actor = await ensureLocalActor(handle.db);
    for (const title of ["first", "second"]) {
      old.push(
        (await handle.db.session.create({ data: { title, ownerId: actor.userId, orgId: actor.orgId, workspace: "" } }))
          .id,
      );
    }
    await handle.close();
    mkdirSync(join(dataDir, "workspace"));
    writeFileSync(join(dataDir, "workspace", "notes.txt"), "kept from before\n");
    // The sandbox is asked for as `npm start` would (auto); without bubblewrap the local runner
    // falls back to its default folder alone, and the new-project half below says so.
    const env = parseEnv({ PORT: "0", QUIVER_DATA_DIR: dataDir, QUIVER_LOCAL_RUNNER: "1" });
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
    await waitFor(() => quiver.services.runners.status().some((r) => r.connected), 60_000, "the local runner");
  }, 120_000);

  afterAll(async () => {
    await quiver?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const run = (sessionId: string, op: string, input: unknown) =>
    quiver.services.runners.run({
      sessionId,
      callId: randomUUID(),
      op,
      input,
      deadline: Date.now() + 20_000,
      signal: new AbortController().signal,
    });

  it("lists every old session in the Default project, working in the same folder", async () => {
    const trpc = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });
    const projects = await trpc.projects.list.query();
    expect(projects.map((p) => p.name)).toEqual(["Default"]);
    expect(projects[0].sessions.map((s) => s.title).sort()).toEqual(["first", "second"]);
    expect(projects[0].workspace).toMatchObject({ state: "ready" });
    for (const id of old)
      expect((await run(id, "read_file", { path: "notes.txt" })).output).toContain("kept from before");
    // A new session without a project goes there too.
    const fresh = await trpc.sessions.create.mutate({ title: "third" });
    expect((await run(fresh.id, "write_file", { path: "third.txt", content: "3" })).ok).toBe(true);
    expect(readFileSync(join(dataDir, "workspace", "third.txt"), "utf8")).toBe("3");
    const rows = await quiver.services.db.session.findMany({
      where: { id: { in: [...old, fresh.id] } },
      select: { workspaceId: true },
    });
    expect(new Set(rows.map((r) => r.workspaceId)).size).toBe(1);
  }, 60_000);

  it("a new project's session works in a folder of its own under the root", async () => {
    const trpc = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });
    const local = quiver.services.runners.status().find((r) => r.connected)!;
    if (!local.root) {
      // No sandbox on this machine: the runner serves the Default folder alone.
      const p = await trpc.projects.create.mutate({ name: "elsewhere", source: { kind: "empty" } });
      expect(p.workspace?.runnerId).toBeNull();
      return;
    }
    const p = await trpc.projects.create.mutate({ name: "elsewhere", source: { kind: "empty" } });
    const s = await trpc.sessions.create.mutate({ title: "new", projectId: p.id });
    expect((await run(s.id, "write_file", { path: "own.txt", content: "mine" })).ok).toBe(true);
    expect(readFileSync(join(dataDir, "workspaces", p.workspace!.id, "own.txt"), "utf8")).toBe("mine");
    expect((await run(s.id, "read_file", { path: "notes.txt" })).ok).toBe(false);
  }, 60_000);
});
