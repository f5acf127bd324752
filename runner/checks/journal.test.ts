// A runner killed with SIGKILL in the middle of a tool_transaction (its edits on disk, its check
// still running) leaves its journal behind; the runner started again on the same workspace puts
// every file back byte-exact before it serves anything — the created file removed, the edited
// and the deleted one as they were, modes included.
import { existsSync } from "node:fs";
import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import { describe, expect, it, vi } from "vitest";
import { spawnRunner, startServer, tempDir, waitFor } from "../../server/testing/runner";
import { useRunnerPerTest } from "../../server/testing/runner-per-test";
import { journalPath } from "./journal";

vi.setConfig({ testTimeout: 300_000 });

const t = useRunnerPerTest();

describe("tool_transaction and a runner killed mid-way", () => {
  it("restores every file from the journal when the runner starts again", async () => {
    const ws = await tempDir();
    const journals = await tempDir("quiver-journal-");
    t.dirs.push(ws, journals);
    const env = { NODE_ENV: "test", QUIVER_CHECKPOINT_DIR: journals } as const;
    const saved = process.env.QUIVER_CHECKPOINT_DIR;
    process.env.QUIVER_CHECKPOINT_DIR = journals;
    const journal = journalPath(ws);
    if (saved === undefined) delete process.env.QUIVER_CHECKPOINT_DIR;
    else process.env.QUIVER_CHECKPOINT_DIR = saved;
    expect(journal.startsWith(`${journals}/transactions/`)).toBe(true);
    await writeFile(
      `${ws}/quiver.checks.json`,
      JSON.stringify({ slow: { argv: ["sleep", "120"], timeoutMs: 600_000 } }),
    );
    await writeFile(`${ws}/edited.txt`, "before\r\nbytes\n");
    await chmod(`${ws}/edited.txt`, 0o640);
    await writeFile(`${ws}/deleted.txt`, "gone soon\n");
    const original = async (p: string) => ({
      data: (await readFile(`${ws}/${p}`)).toString("hex"),
      mode: (await stat(`${ws}/${p}`)).mode & 0o7777,
    });
    const before = { edited: await original("edited.txt"), deleted: await original("deleted.txt") };

    t.server = await startServer();
    const start = async () => {
      t.runner = spawnRunner({ url: t.server!.url, workspace: ws, env });
      await waitFor(() => t.server!.pool.status().some((r) => r.connected), 120_000, "runner to connect");
    };
    await start();
    const run = (op: string, input: unknown) =>
      t.server!.pool.run({
        sessionId: "s1",
        callId: `c_${op}_${Date.now()}`,
        op,
        input,
        deadline: Date.now() + 600_000,
        signal: new AbortController().signal,
      });
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
    expect(existsSync(journal)).toBe(true);
    expect(existsSync(`${ws}/deleted.txt`)).toBe(false);
    t.runner!.child.kill("SIGKILL");
    await t.runner!.exited;
    expect((await pending).ok).toBe(false);
    // Dead runner, files still edited: only the journal can put them back.
    expect(await readFile(`${ws}/edited.txt`, "utf8")).toBe("after\r\nbytes\n");

    await start();
    // The journal is deleted once every file is back.
    await waitFor(() => !existsSync(journal), 60_000, "the journal's rollback");
    expect(existsSync(`${ws}/new`)).toBe(false);
    expect(await original("edited.txt")).toEqual(before.edited);
    expect(await original("deleted.txt")).toEqual(before.deleted);
  });
});
