// A runner killed with SIGKILL in the middle of a tool_transaction (its edits on disk, its check
// still running) leaves its journal behind; the runner started again on the same workspace puts
// every file back byte-exact before it serves anything — the created file removed, the edited
// and the deleted one as they were, modes included. A file someone else changed after the
// transaction wrote it (the person's save, another transaction) is left as they made it, on a
// failed check and after a kill alike; two transactions at once keep a journal each; a step
// whose op refused puts back nothing it did not write.
import { existsSync, readdirSync } from "node:fs";
import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { describe, expect, it, vi } from "vitest";
import { spawnRunner, startServer, tempDir, waitFor } from "../../server/testing/runner";
import { useRunnerPerTest } from "../../server/testing/runner-per-test";
import { tempWorkspace } from "../testing/exec";
import { sha256 } from "../workspace/ledger";
import { Journal, journalDir } from "./journal";

vi.setConfig({ testTimeout: 300_000 });

const t = useRunnerPerTest();

/** A workspace with checks `slow` (120 s), `quick` and `fails` (once `go` exists), its server and runner. */
async function setUp() {
  const ws = await tempDir();
  const journals = await tempDir("quiver-journal-");
  t.dirs.push(ws, journals);
  const env = { NODE_ENV: "test", QUIVER_CHECKPOINT_DIR: journals } as const;
  const saved = process.env.QUIVER_CHECKPOINT_DIR;
  process.env.QUIVER_CHECKPOINT_DIR = journals;
  const dir = journalDir(ws);
  if (saved === undefined) delete process.env.QUIVER_CHECKPOINT_DIR;
  else process.env.QUIVER_CHECKPOINT_DIR = saved;
  expect(dir.startsWith(`${journals}/transactions/`)).toBe(true);
  await writeFile(
    `${ws}/quiver.checks.json`,
    JSON.stringify({
      slow: { argv: ["sleep", "120"], timeoutMs: 600_000 },
      quick: { argv: ["true"] },
      // Fails once the test says so (a file `go`), so a save can land while it runs.
      fails: { argv: ["sh", "-c", "while [ ! -e go ]; do sleep 0.1; done; exit 1"] },
    }),
  );
  t.server = await startServer();
  const start = async () => {
    t.runner = spawnRunner({ url: t.server!.url, workspace: ws, env });
    await waitFor(() => t.server!.pool.status().some((r) => r.connected), 120_000, "runner to connect");
  };
  let n = 0;
  const run = (op: string, input: unknown, sessionId = "s1") =>
    t.server!.pool.run({
      sessionId,
      callId: `c_${op}_${++n}`,
      op,
      input,
      deadline: Date.now() + 600_000,
      signal: new AbortController().signal,
    });
  const journals_ = () => readdirSync(dir, { withFileTypes: true }).filter((e) => e.name.endsWith(".json")).length;
  const kill = async () => {
    t.runner!.child.kill("SIGKILL");
    await t.runner!.exited;
  };
  return { ws, start, run, journals: () => (existsSync(dir) ? journals_() : 0), kill };
}

const text = (path: string) => readFile(path, "utf8");

describe("tool_transaction and a runner killed mid-way", () => {
  it("restores every file from the journal when the runner starts again", async () => {
    const { ws, start, run, journals, kill } = await setUp();
    await writeFile(`${ws}/edited.txt`, "before\r\nbytes\n");
    await chmod(`${ws}/edited.txt`, 0o640);
    await writeFile(`${ws}/deleted.txt`, "gone soon\n");
    const original = async (p: string) => ({
      data: (await readFile(`${ws}/${p}`)).toString("hex"),
      mode: (await stat(`${ws}/${p}`)).mode & 0o7777,
    });
    const before = { edited: await original("edited.txt"), deleted: await original("deleted.txt") };
    await start();
    for (const path of ["edited.txt", "deleted.txt"]) expect((await run("read_file", { path })).ok).toBe(true);
    const pending = run("tool_transaction", {
      steps: [
        { op: "edit_file", path: "edited.txt", old_string: "before", new_string: "after" },
        { op: "apply_patch", patch: "--- a/deleted.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone soon\n" },
        { op: "write_file", path: "new/dir/created.txt", content: "created\n" },
        { op: "run_check", name: "slow" },
      ],
    }).catch((err: Error) => ({ ok: false, output: err.message }));
    await waitFor(() => existsSync(`${ws}/new/dir/created.txt`), 60_000, "the transaction's edits");
    expect(journals()).toBe(1);
    expect(existsSync(`${ws}/deleted.txt`)).toBe(false);
    await kill();
    expect((await pending).ok).toBe(false);
    // Dead runner, files still edited: only the journal can put them back.
    expect(await text(`${ws}/edited.txt`)).toBe("after\r\nbytes\n");

    await start();
    // The journal is deleted once every file is back.
    await waitFor(() => journals() === 0, 60_000, "the journal's rollback");
    expect(existsSync(`${ws}/new`)).toBe(false);
    expect(await original("edited.txt")).toEqual(before.edited);
    expect(await original("deleted.txt")).toEqual(before.deleted);
  });

  it("leaves the person's save made during the transaction, on a failed check and after a kill", async () => {
    const { ws, start, run, journals, kill } = await setUp();
    await writeFile(`${ws}/notes.md`, "v1\n");
    await writeFile(`${ws}/other.md`, "o1\n");
    await start();
    for (const path of ["notes.md", "other.md"]) expect((await run("read_file", { path })).ok).toBe(true);
    const steps = (check: string) => [
      { op: "write_file", path: "notes.md", content: "v2 (agent)\n" },
      { op: "write_file", path: "other.md", content: "o2 (agent)\n" },
      { op: "run_check", name: check },
    ];

    // The check fails: other.md is rolled back, notes.md (saved by the person meanwhile) is not.
    const failing = run("tool_transaction", { steps: steps("fails") });
    await waitFor(() => existsSync(`${ws}/notes.md`) && journals() === 1, 30_000, "the transaction's edits");
    await waitFor(async () => (await text(`${ws}/notes.md`)) === "v2 (agent)\n", 30_000, "the agent's write");
    expect((await run("ide_write", { path: "notes.md", content: "v2 (agent)\nPERSON'S WORK\n" })).ok).toBe(true);
    await writeFile(`${ws}/go`, "");
    const answer = await failing;
    expect(answer.ok).toBe(false);
    expect(answer.output).toContain("notes.md left as it is (changed by someone else");
    expect(await text(`${ws}/notes.md`)).toBe("v2 (agent)\nPERSON'S WORK\n");
    expect(await text(`${ws}/other.md`)).toBe("o1\n");

    // Killed mid-transaction: the same when the runner starts again.
    for (const path of ["notes.md", "other.md"]) expect((await run("read_file", { path })).ok).toBe(true);
    const killed = run("tool_transaction", { steps: steps("slow") }).catch(() => ({ ok: false }));
    await waitFor(async () => (await text(`${ws}/other.md`)) === "o2 (agent)\n", 30_000, "the agent's writes");
    expect((await run("ide_write", { path: "notes.md", content: "MORE WORK\n" })).ok).toBe(true);
    await kill();
    expect((await killed).ok).toBe(false);
    await start();
    await waitFor(() => journals() === 0, 60_000, "the journal's rollback");
    expect(await text(`${ws}/notes.md`)).toBe("MORE WORK\n");
    expect(await text(`${ws}/other.md`)).toBe("o1\n");
  });

  it("keeps a journal per transaction: one that committed does not take another's", async () => {
    const { ws, start, run, journals, kill } = await setUp();
    await writeFile(`${ws}/a.txt`, "a1\n");
    await writeFile(`${ws}/b.txt`, "b1\n");
    await start();
    expect((await run("read_file", { path: "a.txt" }, "s1")).ok).toBe(true);
    expect((await run("read_file", { path: "b.txt" }, "s2")).ok).toBe(true);
    const first = run(
      "tool_transaction",
      {
        steps: [
          { op: "write_file", path: "a.txt", content: "a2-half-done\n" },
          { op: "run_check", name: "slow" },
        ],
      },
      "s1",
    ).catch(() => ({ ok: false }));
    await waitFor(async () => (await text(`${ws}/a.txt`)) === "a2-half-done\n", 30_000, "the first's write");
    const second = await run(
      "tool_transaction",
      {
        steps: [
          { op: "write_file", path: "b.txt", content: "b2\n" },
          { op: "run_check", name: "quick" },
        ],
      },
      "s2",
    );
    expect(second.ok).toBe(true);
    expect(journals()).toBe(1);
    await kill();
    expect((await first).ok).toBe(false);
    await start();
    await waitFor(() => journals() === 0, 60_000, "the journal's rollback");
    expect(await text(`${ws}/a.txt`)).toBe("a1\n");
    expect(await text(`${ws}/b.txt`)).toBe("b2\n");
  });
});

describe("a step whose op refused", () => {
  it("takes back nothing it did not write, and keeps what earlier steps wrote to put back", async () => {
    const { workspace: ws, dir, cleanup } = await tempWorkspace();
    const saved = process.env.QUIVER_CHECKPOINT_DIR;
    process.env.QUIVER_CHECKPOINT_DIR = await tempDir("quiver-journal-");
    try {
      await writeFile(`${dir}/a.txt`, "a1\n");
      await writeFile(`${dir}/f.txt`, "O\n");
      const journal = new Journal(ws, "s1");
      // Step 1 writes a.txt.
      await journal.remember(["a.txt"]);
      await ws.files.writeFile("a.txt", Buffer.from("a2\n"), 0o644);
      ws.ledger.recordWrite("s1", "a.txt", sha256("a2\n"));
      journal.wrote(["a.txt"]);
      // Step 2 would write a.txt and f.txt, but its op refuses: another session wrote f.txt.
      const mark = await journal.remember(["a.txt", "f.txt"]);
      await writeFile(`${dir}/f.txt`, "L (another session's)\n");
      journal.notApplied(mark);
      const done = await journal.rollback();
      expect(await text(`${dir}/f.txt`)).toBe("L (another session's)\n");
      expect(await text(`${dir}/a.txt`)).toBe("a1\n");
      expect(done).toEqual(["a.txt restored"]);
    } finally {
      if (saved === undefined) delete process.env.QUIVER_CHECKPOINT_DIR;
      else process.env.QUIVER_CHECKPOINT_DIR = saved;
      await cleanup();
    }
  });
});
