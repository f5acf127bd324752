// A full disk under the runner, on a real tmpfs: write_file, edit_file and the person's save
// never leave a file cut short or a temp behind, and say "the disk is full" rather than Node's
// bare ENOSPC (which names a /proc path and no file); a disk limit that is not reached is not
// blamed; a checkpoint restore that runs out of room while staging changes nothing and says
// why; the checkpoints' own disk filling up (at the shadow's first use, or midway through a
// snapshot) is a refusal naming it, and checkpoints work again once there is room.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { mountTmpfs, tmpfsRefusal } from "../../server/testing/tmpfs";
import { checkpointOps } from "../checkpoints/ops";
import { fileOps } from "../files";
import type { OpResult, OpTable } from "../ops";
import { opContext } from "../testing/exec";
import { DiskLimit } from "./disk-limit";
import { TEMP_MARK } from "./fs-at";
import { Workspace } from "./workspace";

const refusal = tmpfsRefusal();
if (refusal) console.warn(`disk-full.test: SKIPPED: ${refusal}`);

const KB = 1024;

describe.skipIf(refusal !== undefined)("a full disk under the workspace (real tmpfs)", () => {
  let disk: Exclude<ReturnType<typeof mountTmpfs>, string>;
  let dir: string;
  let ws: Workspace;
  let n = 0;

  beforeAll(() => {
    const m = mountTmpfs("3m");
    if (typeof m === "string") throw new Error(m);
    disk = m;
  });
  afterAll(() => {
    disk?.unmount();
    delete process.env.QUIVER_CHECKPOINT_DIR;
  });
  beforeEach(async () => {
    dir = join(disk.dir, `ws${++n}`);
    mkdirSync(dir);
    process.env.QUIVER_CHECKPOINT_DIR = join(disk.dir, `shadows${n}`);
    ws = await Workspace.open(dir, { watch: false });
  });
  afterEach(() => {
    ws.dispose();
    for (const name of readdirSync(disk.dir)) rmSync(join(disk.dir, name), { recursive: true, force: true });
  });

  /** Fills the disk up to about `leave` bytes free. */
  const fill = (leave: number) => {
    try {
      execFileSync("dd", ["if=/dev/zero", `of=${join(disk.dir, "filler")}`, "bs=4k", "status=none"], {
        stdio: "pipe",
      });
    } catch {
      /* full: what it was meant to do */
    }
    if (leave > 0) execFileSync("truncate", ["-s", `-${leave}`, join(disk.dir, "filler")]);
  };
  const unfill = () => rmSync(join(disk.dir, "filler"), { force: true });

  /** An op's answer as the person or model sees it: a thrown error is the runner's refusal. */
  const call = async (table: OpTable, op: string, input: unknown): Promise<OpResult> => {
    const o = table[op];
    try {
      return await o.run(o.input.parse(input), opContext(ws));
    } catch (err) {
      return { ok: false, output: (err as Error).message };
    }
  };
  /** Every name under the workspace, recursively. */
  const everything = () => readdirSync(dir, { recursive: true }).map(String).sort();
  const temps = () => everything().filter((p) => p.includes(TEMP_MARK));

  it("write_file, edit_file and ide_write past the room left: the file is whole, no temp, 'disk is full'", async () => {
    const original = "line one\nline two\n".repeat(200);
    writeFileSync(join(dir, "a.txt"), original);
    expect((await call(fileOps, "read_file", { path: "a.txt" })).ok).toBe(true);
    fill(256 * KB);

    const big = "x".repeat(1024 * KB);
    const write = await call(fileOps, "write_file", { path: "a.txt", content: big });
    expect(write.ok).toBe(false);
    expect(write.output).toMatch(/^the disk is full \(no space left on device\): a\.txt was not written/);
    expect(write.output).not.toMatch(/proc|ENOSPC/);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe(original);

    const edit = await call(fileOps, "edit_file", {
      path: "a.txt",
      old_string: "line one",
      new_string: "z".repeat(2 * KB), // 200 times: 400 KB more than the room left
      replace_all: true,
    });
    expect(edit.ok).toBe(false);
    expect(edit.output).toMatch(/^the disk is full .*: a\.txt was not written and is left as it was/);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe(original);

    // A new file in new folders: neither the file nor the folders are left.
    const fresh = await call(fileOps, "write_file", { path: "deep/er/new.txt", content: big });
    expect(fresh.output).toMatch(/^the disk is full .*deep\/er\/new\.txt was not written/);
    const save = await call(fileOps, "ide_write", { path: "a.txt", content: big });
    expect(save.output).toMatch(/^the disk is full/);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe(original);
    expect(everything()).toEqual(["a.txt"]);
    expect(temps()).toEqual([]);

    // Room again: the same write goes through.
    unfill();
    expect((await call(fileOps, "write_file", { path: "a.txt", content: big })).ok).toBe(true);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe(big);
  });

  it("a disk limit far from reached is not blamed for the disk being full", async () => {
    const limit = new DiskLimit(() => ws.files.cwd, { limitBytes: 100 * 1024 * KB, measureEveryMs: 0 });
    ws.files.writeGuard = limit.guardFor(ws.files);
    fill(64 * KB);
    const r = await call(fileOps, "write_file", { path: "b.txt", content: "y".repeat(512 * KB) });
    expect(r.output).toMatch(/^the disk is full/);
    expect(r.output).not.toMatch(/disk limit/);
    expect(temps()).toEqual([]);
  });

  it("a restore that runs out of room while staging changes nothing, says the disk is full, leaves no stage", async () => {
    // Incompressible and different per file, so each takes its room in the stage.
    for (let i = 0; i < 6; i++) writeFileSync(join(dir, `f${i}.bin`), Buffer.alloc(200 * KB, 65 + i));
    const cp = await call(checkpointOps, "checkpoint.create", {});
    expect(cp.ok, cp.output).toBe(true);
    for (let i = 0; i < 6; i++) writeFileSync(join(dir, `f${i}.bin`), `now ${i}\n`);
    fill(500 * KB); // room for two of the six
    const r = await call(checkpointOps, "checkpoint.restore", {
      to: (cp.meta as { commit: string }).commit,
      dryRun: false,
      keepPersonEdits: false,
    });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/the disk is full \(no space left on device\): nothing was changed/);
    expect(r.output).not.toMatch(/could not read/);
    for (let i = 0; i < 6; i++) expect(readFileSync(join(dir, `f${i}.bin`), "utf8")).toBe(`now ${i}\n`);
    expect(temps()).toEqual([]);
  });

  it("the checkpoints' disk full at first use, then midway through a snapshot: refused naming it, then works", async () => {
    writeFileSync(join(dir, "a.txt"), "a\n");
    fill(0);
    const first = await call(checkpointOps, "checkpoint.create", {});
    expect(first.ok).toBe(false);
    expect(first.output).toMatch(/the disk holding the checkpoints \(.*\) is full/);
    unfill();
    // A first use cut short by the full disk once left an empty HEAD: "not a git repository" for good.
    const again = await call(checkpointOps, "checkpoint.create", {});
    expect(again.ok, again.output).toBe(true);

    // Random: git compresses what it stores, and these must take their room.
    for (let i = 0; i < 4; i++) writeFileSync(join(dir, `r${i}.bin`), randomBytes(300 * KB));
    fill(400 * KB);
    const midway = await call(checkpointOps, "checkpoint.create", {});
    expect(midway.ok).toBe(false);
    expect(midway.output).toMatch(/the disk holding the checkpoints .* is full .*git update-index failed/);
    unfill();
    const after = await call(checkpointOps, "checkpoint.create", {});
    expect(after.ok, after.output).toBe(true);
  });
});
