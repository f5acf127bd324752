// The files router over tRPC with a real runner: session check, input validation, error codes.
import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnRunner, startServer, waitFor, type RunnerChild, type TestServer } from "../../testing/runner";
import { createFileService } from "../../services/files";
import { createSessionService } from "../../services/sessions";
import { ensureLocalActor } from "../../services/local-user";
import { testDatabases, useTestDb } from "../../testing/db";
import { appRouter } from "../root";
import type { Services } from "../../services/types";

describe.each(testDatabases())("files router on %s", (provider) => {
  const t = useTestDb(provider);
  let server: TestServer;
  let runner: RunnerChild;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "quiver-files-router-"));
    await writeFile(join(dir, "a.txt"), "alpha\n");
    server = await startServer();
    runner = spawnRunner({ url: server.url, workspace: dir });
    await waitFor(() => server.pool.status().some((r) => r.connected), 20_000, "runner");
  }, 30_000);
  afterAll(async () => {
    await runner?.stop();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function caller() {
    const db = t.current.db;
    const actor = await ensureLocalActor(db);
    const sessions = createSessionService(db);
    const services = { db, sessions, files: createFileService(server.pool) } as unknown as Services;
    const session = await sessions.create(actor, {});
    return { api: appRouter.createCaller({ services, actor }), sessionId: session.id };
  }

  it("opens, saves and reports conflicts with tRPC codes", async () => {
    const { api, sessionId } = await caller();
    const tree = await api.files.tree({ sessionId });
    expect(tree.entries).toContainEqual({ path: "a.txt", type: "file" });
    const file = await api.files.read({ sessionId, path: "a.txt" });
    expect(file.content).toBe("alpha\n");
    await api.files.save({ sessionId, path: "a.txt", content: "beta\n", expectHash: file.hash });
    await expect(
      api.files.save({ sessionId, path: "a.txt", content: "gamma\n", expectHash: file.hash }),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    await expect(api.files.read({ sessionId, path: "nope.txt" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(api.files.read({ sessionId, path: "../../etc/passwd" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await api.files.create({ sessionId, path: "d/e.txt", kind: "file" });
    await expect(api.files.create({ sessionId, path: "d/e.txt", kind: "file" })).rejects.toMatchObject({
      code: "CONFLICT",
    });
  });

  it("refuses an upload outside the workspace as a bad request that says why, not a 500", async () => {
    const { api, sessionId } = await caller();
    const base64 = Buffer.from("x").toString("base64");
    for (const path of ["../../escape.bin", "/etc/quiver-upload.bin", ".git/hooks/pre-commit"]) {
      const err = await api.files.upload({ sessionId, path, base64 }).then(
        () => null,
        (e: unknown) => e as { code: string; message: string },
      );
      expect(err, path).toMatchObject({ code: "BAD_REQUEST" });
      expect(err!.message, path).toMatch(/outside the workspace|inside \.git/);
    }
    await expect(api.files.upload({ sessionId, path: "up/ok.bin", base64 })).resolves.toEqual({
      path: "up/ok.bin",
      size: 1,
    });
    await expect(api.files.upload({ sessionId, path: "up/ok.bin", base64 })).rejects.toMatchObject({
      code: "CONFLICT",
    });
  });

  it("refuses sessions that do not exist", async () => {
    const { api } = await caller();
    await expect(api.files.tree({ sessionId: "no-such-session" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("lists the uncommitted changes and a changed file's version at HEAD", async () => {
    const { api, sessionId } = await caller();
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd: dir });
    git("init", "-q", "-b", "main");
    git("add", ".");
    git("commit", "-qm", "start");
    expect(await api.files.changes({ sessionId })).toEqual({
      mode: "git",
      branch: "main",
      files: [],
      truncated: false,
    });
    const file = await api.files.read({ sessionId, path: "a.txt" });
    await api.files.save({ sessionId, path: "a.txt", content: `${file.content}more\n`, expectHash: file.hash });
    await api.files.create({ sessionId, path: "fresh.txt", kind: "file" });
    expect((await api.files.changes({ sessionId })).files).toEqual([
      { path: "a.txt", status: "modified", added: 1, removed: 0 },
      { path: "fresh.txt", status: "added", added: 0, removed: 0 },
    ]);
    expect(await api.files.original({ sessionId, path: "a.txt" })).toEqual({
      path: "a.txt",
      content: file.content,
      binary: false,
    });
    expect(await api.files.original({ sessionId, path: "fresh.txt" })).toEqual({
      path: "fresh.txt",
      content: null,
      binary: false,
    });
    await expect(api.files.original({ sessionId, path: "../../etc/passwd" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
  });
});
