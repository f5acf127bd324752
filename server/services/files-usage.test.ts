// files.usage on both databases, through tRPC against a real server and a real `--root` runner:
// a session's workspace reports the bytes its files take and the org's limit; a file written
// raises the figure, the limit follows an admin's change; a runner's own `--workspace` folder
// (the embedded default) has no limit; a session with no runner is refused as unavailable.
import { describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { waitFor } from "../testing/runner";
import { useRootRunnerServer } from "../testing/root-runner";
import { testDatabases, useTestDb } from "../testing/db";

const MB = 1024 ** 2;

describe.each(testDatabases())("files.usage on %s", (provider) => {
  const t = useTestDb(provider);
  const server = useRootRunnerServer(t);
  const { client } = server;

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

    const write = await server.quiver.services.runners.run({
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
