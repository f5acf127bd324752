// A restore whose answer never comes still leaves an Undo. A real server with its real runner:
// a turn rewrites 2,000 files, the person restores to before it, and the runner is killed -9
// once the first file changed (mid-apply, the answer unsent). The restore answers that its
// outcome is unknown, with an Undo that puts every file back as it was before the restore; the
// session hears of it; a refused restore (nothing changed) leaves no such checkpoint behind.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startCrashServer, type CrashServer } from "./testing/crash-server";
import { startFakeProvider, type FakeProvider } from "./engine/fake-provider/server";
import type { SessionEvent } from "./protocol/events";

const FILES = 2000;
const contents = (dir: string) =>
  Object.fromEntries(
    readdirSync(dir)
      .filter((f) => f.endsWith(".txt"))
      .sort()
      .map((f) => [f, readFileSync(join(dir, f), "utf8")]),
  );

describe("a restore whose answer is lost", () => {
  let fake: FakeProvider;
  let dataDir: string;
  let ws: string;
  let server: CrashServer;
  let sessionId: string;
  const events: SessionEvent[] = [];

  beforeAll(async () => {
    fake = await startFakeProvider();
    dataDir = mkdtempSync(join(tmpdir(), "quiver-lost-"));
    ws = join(dataDir, "workspace");
    mkdirSync(ws);
    for (let i = 0; i < FILES; i++) writeFileSync(join(ws, `f${i}.txt`), `before ${i}\n`);
    server = await startCrashServer({
      QUIVER_DATA_DIR: dataDir,
      QUIVER_PROVIDER: "anthropic",
      QUIVER_MODEL: "claude-test",
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
      QUIVER_CHECKPOINT_DIR: join(dataDir, "checkpoints"),
    });
    sessionId = (await server.client.sessions.create.mutate({ title: "lost answer" })).id;
    server.client.turns.events.subscribe(
      { sessionId, lastSeq: 0 },
      {
        onData: (tracked) => {
          const ev = (tracked as { data: SessionEvent }).data;
          events.push(ev);
          if (ev.type === "approval.required")
            void server.client.approvals.answer
              .mutate({ approvalId: ev.approvalId, choice: "once" } as never)
              .catch(() => undefined);
        },
      },
    );
  }, 120_000);

  afterAll(async () => {
    server?.cleanup();
    await fake?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function until<T>(what: () => T | undefined | false, ms = 60_000): Promise<T> {
    for (const deadline = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 20))) {
      const v = what();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out; ${server.log().slice(-2000)}`);
    }
  }

  it("answers that its outcome is unknown, with an Undo that puts every file back", async () => {
    const command = `for i in $(seq 0 ${FILES - 1}); do echo "after $i" > f$i.txt; done`;
    fake.enqueue(
      { blocks: [{ type: "tool_call", id: "s1", name: "shell", arguments: JSON.stringify({ command }) }] },
      { blocks: [{ type: "text", text: "done" }] },
    );
    const { turnId } = await server.client.turns.send.mutate({ sessionId, text: "rewrite them" });
    await until(() => events.some((e) => e.type === "checkpoint.created" && e.phase === "after"));
    const before = contents(ws);
    expect(before["f7.txt"]).toBe("after 7\n");

    const runnerPid = Number(
      execFileSync("pgrep", ["-P", String(server.child.pid), "-f", "runner/main.ts"], { encoding: "utf8" })
        .trim()
        .split("\n")[0],
    );
    const restoring = server.client.checkpoints.restore.mutate({ sessionId, turnId, dryRun: false });
    // The first file put back: the runner is mid-apply, its answer not yet sent.
    await until(
      () => readdirSync(ws).some((f) => f.endsWith(".txt") && readFileSync(join(ws, f), "utf8").startsWith("before")),
      60_000,
    );
    process.kill(runnerPid, "SIGKILL");
    const r = await restoring;
    expect(r.undoCheckpointId).toBeTruthy();
    expect(r.unknown).toMatch(/answer was lost .*Undo puts every file back as it was before the restore/);
    expect(events.find((e) => e.type === "notice" && e.code === "checkpoint.unknown")).toBeTruthy();
    expect(events.find((e) => e.type === "checkpoint.restored")).toMatchObject({
      undoCheckpointId: r.undoCheckpointId,
    });
    const list = await server.client.checkpoints.list.query({ sessionId });
    expect(list.checkpoints.filter((c) => c.phase === "restore-undo").map((c) => c.id)).toEqual([r.undoCheckpointId]);

    // The next runner finds the workspace however the kill left it; Undo gives back the files as they were.
    for (const deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 300))) {
      try {
        await server.client.checkpoints.restore.mutate({
          sessionId,
          checkpointId: r.undoCheckpointId!,
          dryRun: false,
        });
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
      }
    }
    expect(contents(ws)).toEqual(before);
  }, 240_000);

  it("leaves no undo behind when the restore is refused", async () => {
    const list = async () => (await server.client.checkpoints.list.query({ sessionId })).checkpoints;
    const undos = (await list()).filter((c) => c.phase === "restore-undo").length;
    const target = (await list()).find((c) => c.phase === "before")!;
    // One blob of the target gone from the shadow: the restore cannot read what it would write,
    // so it refuses and changes nothing.
    const blob = execFileSync("git", ["hash-object", "--stdin"], { input: "before 0\n", encoding: "utf8" }).trim();
    const shadows = join(dataDir, "checkpoints");
    const loose = readdirSync(shadows, { recursive: true, encoding: "utf8" }).filter((p) =>
      p.endsWith(`objects/${blob.slice(0, 2)}/${blob.slice(2)}`),
    );
    expect(loose.length).toBeGreaterThan(0);
    for (const p of loose) rmSync(join(shadows, p));
    const now = contents(ws);
    await expect(
      server.client.checkpoints.restore.mutate({ sessionId, checkpointId: target.id, dryRun: false }),
    ).rejects.toThrow(/failed/);
    expect(contents(ws)).toEqual(now);
    expect((await list()).filter((c) => c.phase === "restore-undo")).toHaveLength(undos);
  }, 120_000);
});
