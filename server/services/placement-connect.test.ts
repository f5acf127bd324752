// The moment a runner connects: the pool holds it before its hello is recorded in the database,
// which is where placement looks. A session asking for its place in that moment (the first page
// load after a start, its workspace made before any runner was there) waits for the record and
// works, rather than failing with "no connected runner can hold this session's workspace". The
// moment is stretched here by a PostgreSQL lock on the runner table (reads go on, the hello's
// write waits); on SQLite one query thread runs the write before any read behind it.
import { describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { loadPg } from "../db/driver";
import { waitFor } from "../testing/runner";
import { useRootRunnerServer } from "../testing/root-runner";
import { testDatabases, useTestDb } from "../testing/db";

const hasPostgres = testDatabases().includes("postgresql");

describe.skipIf(!hasPostgres)("a session asking while its runner's hello is being recorded", () => {
  const t = useTestDb("postgresql");
  const server = useRootRunnerServer(t);

  it("waits for the record and runs on the runner, not failing at once", async () => {
    await server.stopRunner();
    await waitFor(() => !server.live(), 10_000, "runner gone");
    await waitFor(
      async () => (await t.current.db.runnerNode.count({ where: { instanceId: { not: null } } })) === 0,
      10_000,
      "runner recorded as gone",
    );
    const trpc = server.client();
    const p = await trpc.projects.create.mutate({ name: "early", source: { kind: "empty" } });
    const session = (await trpc.sessions.create.mutate({ title: "early", projectId: p.id })).id;
    expect((await t.current.db.workspace.findUnique({ where: { id: p.workspace!.id } }))?.runnerId).toBeNull();

    const lock = new (loadPg().Client)({ connectionString: t.current.url });
    await lock.connect();
    try {
      await lock.query(`BEGIN; LOCK TABLE "RunnerNode" IN EXCLUSIVE MODE`);
      server.startRunner();
      await waitFor(server.live, 30_000, "runner connected to the pool");
      const call = server.quiver.services.runners.run({
        sessionId: session,
        callId: randomUUID(),
        op: "write_file",
        input: { path: "first.txt", content: "placed" },
        deadline: Date.now() + 30_000,
        signal: new AbortController().signal,
      });
      const early = await Promise.race([
        call.then(
          () => "answered",
          (err: Error) => `failed: ${err.message}`,
        ),
        new Promise((resolve) => setTimeout(() => resolve("waiting"), 1_000)),
      ]);
      expect(early).toBe("waiting");
      await lock.query("COMMIT");
      const result = await call;
      expect(result.ok, result.output).toBe(true);
    } finally {
      await lock.query("ROLLBACK").catch(() => {});
      await lock.end();
    }
    const ws = await t.current.db.workspace.findUnique({ where: { id: p.workspace!.id } });
    expect(ws?.runnerId).toBe("r1");
  }, 90_000);
});
