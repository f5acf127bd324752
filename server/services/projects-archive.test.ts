// An archive project is made only from its creator's own upload, end to end on both databases:
// a real server, a real `--root` runner. The person's upload (POST /api/uploads) becomes a
// project whose workspace holds the archive's files; another person's upload id, an unknown one
// and a malformed one are refused with a clear reason, and no project is left behind.
import { describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { waitFor } from "../testing/runner";
import { useRootRunnerServer } from "../testing/root-runner";
import { testDatabases, useTestDb } from "../testing/db";
import { makeTarGz } from "../../runner/workspace/archive-fixtures";

describe.each(testDatabases())("archive projects on %s", (provider) => {
  const t = useTestDb(provider);
  const server = useRootRunnerServer(t);
  const { client } = server;

  it("makes a project from the person's own upload: its workspace holds the archive's files", async () => {
    const archive = makeTarGz([{ name: "src/hello.txt", data: "from the archive" }]);
    const res = await fetch(`${server.quiver.url}/api/uploads?name=mine.tgz`, {
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
    expect(readFileSync(join(server.rootDir, ws, "src/hello.txt"), "utf8")).toBe("from the archive");
  }, 60_000);

  it("keeps the archive while a project is made from it, so later workspaces have it; lets it go with the last one", async () => {
    const res = await fetch(`${server.quiver.url}/api/uploads?name=kept.tgz`, {
      method: "POST",
      body: new Uint8Array(makeTarGz([{ name: "a.txt", data: "a" }])),
    });
    const { uploadId: id } = (await res.json()) as { uploadId: string };
    const mark = join(server.dataDir, "uploads", `${id}.kept`);
    const trpc = client();
    const one = await trpc.projects.create.mutate({ name: "kept-one", source: { kind: "archive", name: id } });
    expect(existsSync(mark)).toBe(true);
    const two = await trpc.projects.create.mutate({ name: "kept-two", source: { kind: "archive", name: id } });
    // A name taken: no project, and the archive stays kept for the two that have it.
    await expect(
      trpc.projects.create.mutate({ name: "kept-one", source: { kind: "archive", name: id } }),
    ).rejects.toThrow(/already/);
    expect(existsSync(mark)).toBe(true);
    for (const p of [one, two])
      await waitFor(
        async () => (await t.current.db.workspace.findUnique({ where: { id: p.workspace!.id } }))?.state === "ready",
        30_000,
        "workspace ready",
      );
    await trpc.projects.remove.mutate({ id: one.id });
    expect(existsSync(mark)).toBe(true);
    await trpc.projects.remove.mutate({ id: two.id });
    expect(existsSync(mark)).toBe(false);
    // A mark no project stands behind (a create or delete killed midway) goes at the next start.
    await writeFile(mark, "");
    await server.quiver.services.projects.releaseOrphanUploads();
    expect(existsSync(mark)).toBe(false);
  }, 90_000);

  it("refuses another person's upload id, an unknown one and a malformed one; no project is made", async () => {
    // An upload Mallory sent (same org even): its id is no key for anyone else.
    const theirs = `u-${"ab".repeat(12)}`;
    const dir = join(server.dataDir, "uploads");
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
