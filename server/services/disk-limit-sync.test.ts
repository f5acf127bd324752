// The org's disk limit reaching the runners, on both databases: a real server, a real `--root`
// runner. A workspace placed after an admin set the limit is created with it (a write past it is
// refused naming it), a change reaches the connected runner before setDiskLimit answers, and a
// change made while the runner was away reaches it when it connects again.
import { describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { waitFor } from "../testing/runner";
import { useRootRunnerServer } from "../testing/root-runner";
import { testDatabases, useTestDb } from "../testing/db";

const MB = 1024 ** 2;

describe.each(testDatabases())("org disk limit on the runners on %s", (provider) => {
  const t = useTestDb(provider);
  const server = useRootRunnerServer(t);
  const { client } = server;
  const limitOnRunner = async (workspaceId: string) =>
    (
      JSON.parse((await server.quiver.services.runners.runOn("r1", "workspace.usage", { workspaceId })).output) as {
        diskLimitBytes?: number;
      }
    ).diskLimitBytes;
  let session = "";
  let workspace = "";

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
    const write = await server.quiver.services.runners.run({
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

    await server.stopRunner();
    await waitFor(() => !server.live(), 10_000, "runner gone");
    await trpc.uploads.setDiskLimit.mutate({ limitMb: 3 });
    server.startRunner();
    await waitFor(server.live, 30_000, "runner back");
    await waitFor(async () => (await limitOnRunner(workspace)) === 3 * MB, 10_000, "the limit set while away");

    // Back to the default (5 GB): sent as such, not lifted.
    await trpc.uploads.setDiskLimit.mutate({ limitMb: null });
    expect(await limitOnRunner(workspace)).toBe(5 * 1024 * MB);
  }, 90_000);
});
