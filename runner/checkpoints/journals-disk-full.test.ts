// The runner's two journals beside the checkpoints (a tool_transaction's originals, a restore in
// progress) when their disk is full, on a real tmpfs: neither leaves a temp behind to hold the
// disk's last room (a real runner's transaction answers with the failure and leaves the folder
// clean), and a restore that cannot record itself first changes nothing and says why.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { spawnRunner } from "../../server/testing/runner";
import { mountTmpfs, tmpfsRefusal } from "../../server/testing/tmpfs";
import { FakeServer, outsideTmp } from "../testing/root";
import { opContext } from "../testing/exec";
import { Workspace } from "../workspace/workspace";
import { checkpointOps } from "./ops";
import { restoreJournalPath, writeRestoreJournal } from "./restore-journal";
import { ShadowError } from "./shadow";

const refusal = tmpfsRefusal();
if (refusal) console.warn(`journals-disk-full.test: SKIPPED: ${refusal}`);

describe.skipIf(refusal !== undefined)("the journals on a full checkpoint disk (real tmpfs)", () => {
  let disk: Exclude<ReturnType<typeof mountTmpfs>, string>;
  let base: string;
  let dir: string;
  let shadows: string;
  let n = 0;

  beforeAll(async () => {
    const m = mountTmpfs("4m");
    if (typeof m === "string") throw new Error(m);
    disk = m;
    base = await outsideTmp("quiver-journals-full-");
  });
  afterAll(() => {
    disk?.unmount();
    rmSync(base, { recursive: true, force: true });
  });
  beforeEach(() => {
    dir = join(base, `ws${++n}`);
    mkdirSync(dir);
    shadows = join(disk.dir, `shadows${n}`);
    for (const sub of ["transactions", "restores"]) mkdirSync(join(shadows, sub), { recursive: true });
    process.env.QUIVER_CHECKPOINT_DIR = shadows;
  });
  afterEach(() => {
    delete process.env.QUIVER_CHECKPOINT_DIR;
    for (const name of readdirSync(disk.dir)) rmSync(join(disk.dir, name), { recursive: true, force: true });
  });

  /** Fills the disk to the last block. */
  const fill = () => {
    try {
      execFileSync("dd", ["if=/dev/zero", `of=${join(disk.dir, "filler")}`, "bs=4k", "status=none"], { stdio: "pipe" });
    } catch {
      /* full: what it was meant to do */
    }
  };

  it("a real runner's tool_transaction: refused, the file untouched, no temp of the journal left", async () => {
    writeFileSync(join(dir, "a.txt"), "original\n");
    const server = new FakeServer();
    const runner = spawnRunner({
      url: await server.listen(),
      workspace: dir,
      env: { NODE_ENV: "test", QUIVER_CHECKPOINT_DIR: shadows },
    });
    try {
      await server.hello();
      fill();
      const r = await server.request(
        "tool_transaction",
        { steps: [{ op: "write_file", path: "b.txt", content: "new\n" }] },
        { timeoutMs: 60_000 },
      );
      expect(r.ok, r.output).toBe(false);
      expect(r.output).toMatch(/ENOSPC|no space/i);
      // No journal and no temp of one: at most the workspace's empty journal folder.
      const left = readdirSync(join(shadows, "transactions"), { recursive: true, withFileTypes: true });
      expect(left.filter((e) => !e.isDirectory()).map((e) => e.name)).toEqual([]);
      expect(readdirSync(dir)).toEqual(["a.txt"]);
      expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("original\n");
    } finally {
      await runner.stop();
      await server.close();
    }
  }, 120_000);

  it("a restore's record: refused as the full disk it is, no temp left", () => {
    fill();
    const entry = { root: dir, key: "s-0123456789abcdef01234567", undo: "a".repeat(40), paths: ["x"], at: Date.now() };
    expect(() => writeRestoreJournal(entry)).toThrow(ShadowError);
    expect(() => writeRestoreJournal(entry)).toThrow(
      /nothing was changed: the disk holding the checkpoints .* is full/,
    );
    expect(readdirSync(join(shadows, "restores"))).toEqual([]);
  });

  it("a restore that cannot record itself changes nothing, and works once it can", async () => {
    writeFileSync(join(dir, "a.txt"), "old\n");
    const ws = await Workspace.open(dir, { watch: false });
    const run = (op: string, input: unknown) =>
      checkpointOps[op].run(checkpointOps[op].input.parse(input), opContext(ws));
    try {
      const cp = await run("checkpoint.create", {});
      expect(cp.ok, cp.output).toBe(true);
      writeFileSync(join(dir, "a.txt"), "new\n");
      writeFileSync(join(dir, "b.txt"), "made\n");
      // Where the record goes cannot take it (here: a file where its folder should be).
      rmSync(join(shadows, "restores"), { recursive: true });
      writeFileSync(join(shadows, "restores"), "");
      const input = { to: (cp.meta as { commit: string }).commit, dryRun: false, keepPersonEdits: false };
      const refused = await run("checkpoint.restore", input);
      expect(refused.ok).toBe(false);
      expect(refused.output).toMatch(/nothing was changed/);
      expect(readdirSync(dir).sort()).toEqual(["a.txt", "b.txt"]);
      expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("new\n");
      rmSync(join(shadows, "restores"));
      const done = await run("checkpoint.restore", input);
      expect(done.ok, done.output).toBe(true);
      expect(readdirSync(dir)).toEqual(["a.txt"]);
      expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("old\n");
      expect(readdirSync(join(shadows, "restores"))).toEqual([]);
      expect(restoreJournalPath(dir).startsWith(join(shadows, "restores"))).toBe(true);
    } finally {
      ws.dispose();
    }
  });
});
