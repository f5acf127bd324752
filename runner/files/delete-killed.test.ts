// Deleting a folder from the IDE while the runner is killed -9, with a real process: the folder
// is there whole or gone, never half-deleted, whenever the kill lands; what is left of it (a
// `.quiver-gone-<hex>` at the root) is never recorded by a checkpoint and is swept by the next
// runner, and nothing named like it that the runner did not make (a link planted to lead the
// removal outside, a file, one below the root) is ever removed or followed.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkpointOps } from "../checkpoints/ops";
import { REPO_ROOT, runScript } from "../testing/child";
import { outsideTmp } from "../testing/root";
import { opContext } from "../testing/exec";
import { WorkspaceFs } from "../workspace/fs-at";
import { GONE_NAME } from "../workspace/fs-at/names";
import { sweepLeftovers } from "../workspace/leftovers";
import { Workspace } from "../workspace/workspace";
import { personFileOps } from "./person";

const ROOT = REPO_ROOT;
let base: string;
let dir: string;
let n = 0;

beforeEach(async () => {
  base ??= await outsideTmp("quiver-delete-killed-");
  dir = join(base, `ws${++n}`);
  mkdirSync(dir);
  process.env.QUIVER_CHECKPOINT_DIR = join(base, `shadows${n}`);
});
afterEach(() => delete process.env.QUIVER_CHECKPOINT_DIR);
afterAll(() => rmSync(base, { recursive: true, force: true }));

const SUBS = 200;
const FILES = 60;
const gone = () => readdirSync(dir).filter((f) => GONE_NAME.test(f));
const sweep = async (minAgeMs: number) => {
  const files = WorkspaceFs.open(dir);
  try {
    return await sweepLeftovers(files, { minAgeMs });
  } finally {
    files.close();
  }
};

describe("ide_delete of a folder, the runner killed -9 midway", () => {
  it("leaves the folder whole or gone, never half; checkpoints skip what is left, the sweep removes it", async () => {
    writeFileSync(join(dir, "keep.txt"), "kept\n");
    for (let s = 0; s < SUBS; s++) {
      mkdirSync(join(dir, "big", `d${s}`), { recursive: true });
      for (let f = 0; f < FILES; f++) writeFileSync(join(dir, "big", `d${s}`, `f${f}.txt`), `${s}/${f}\n`);
    }
    const {
      p,
      exited,
      out: printed,
    } = runScript(
      base,
      `
      import { Workspace } from "${ROOT}/runner/workspace/workspace.ts";
      import { opContext } from "${ROOT}/runner/testing/exec.ts";
      import { personFileOps } from "${ROOT}/runner/files/person.ts";
      const ws = await Workspace.open(process.argv[2], { watch: false });
      const r = await personFileOps.ide_delete.run({ path: "big" }, opContext(ws));
      console.log("deleted", r.ok, r.output);
    `,
      [dir],
    );
    // Killed the moment the deletion has visibly begun: the folder moved, or a part of it gone.
    // One read: the folder can be moved away between an exists and a listing.
    const started = () => {
      try {
        return readdirSync(join(dir, "big")).length < SUBS;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return true;
        throw err;
      }
    };
    const until = Date.now() + 60_000;
    while (!started() && Date.now() < until && p.exitCode === null) await new Promise((r) => setImmediate(r));
    p.kill("SIGKILL");
    await exited;
    expect(printed(), "the kill came too late to land midway").not.toContain("deleted");

    // From the person's view: gone, all of it (or, had the kill come first, there whole).
    expect(existsSync(join(dir, "big"))).toBe(false);
    expect(readdirSync(dir).filter((f) => !GONE_NAME.test(f))).toEqual(["keep.txt"]);
    const left = gone();
    expect(left).toHaveLength(1);
    expect(readdirSync(join(dir, left[0])).length).toBeGreaterThan(0);

    // A checkpoint taken now does not record it (a restore would bring the deleted files back).
    const ws = await Workspace.open(dir, { watch: false });
    try {
      const op = checkpointOps["checkpoint.create"];
      const cp = await op.run(op.input.parse({}), opContext(ws));
      expect(cp.ok, cp.output).toBe(true);
      expect(cp.meta?.filesChanged).toBe(1);
    } finally {
      ws.dispose();
    }
    // Renamed just now: too recent to be sure no runner is still removing it.
    expect((await sweep(60_000)).young).toEqual(left);
    const r = await sweep(0);
    expect(r.removed).toEqual(left);
    expect(readdirSync(dir)).toEqual(["keep.txt"]);
    expect(readFileSync(join(dir, "keep.txt"), "utf8")).toBe("kept\n");
  }, 120_000);

  it("a delete that ends leaves nothing of ours behind", async () => {
    mkdirSync(join(dir, "a", "b"), { recursive: true });
    writeFileSync(join(dir, "a", "b", "c.txt"), "c\n");
    writeFileSync(join(dir, "f.txt"), "f\n");
    const ws = await Workspace.open(dir, { watch: false });
    try {
      for (const path of ["a", "f.txt"]) {
        const r = await personFileOps.ide_delete.run({ path }, opContext(ws));
        expect(r.ok, r.output).toBe(true);
      }
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      ws.dispose();
    }
  });
});

describe("the sweep of deleted folders' leftovers", () => {
  it("removes only real folders by the exact name at the root; never follows a link", async () => {
    const outside = join(base, `outside${n}`);
    mkdirSync(outside);
    writeFileSync(join(outside, "secret.txt"), "secret\n");
    // Ours: a real folder by the name, holding the person's deleted files and a link out.
    mkdirSync(join(dir, ".quiver-gone-00112233aabb", "sub"), { recursive: true });
    writeFileSync(join(dir, ".quiver-gone-00112233aabb", "sub", "x.txt"), "deleted\n");
    symlinkSync(outside, join(dir, ".quiver-gone-00112233aabb", "out"));
    symlinkSync(join(outside, "secret.txt"), join(dir, ".quiver-gone-00112233aabb", "sub", "s"));
    // Not ours: a link by the name (to a folder outside), a file by it, one below the root, near misses.
    symlinkSync(outside, join(dir, ".quiver-gone-aaaaaaaaaaaa"));
    writeFileSync(join(dir, ".quiver-gone-bbbbbbbbbbbb"), "the person's\n");
    mkdirSync(join(dir, "src", ".quiver-gone-cccccccccccc"), { recursive: true });
    writeFileSync(join(dir, "src", ".quiver-gone-cccccccccccc", "y.txt"), "the person's\n");
    mkdirSync(join(dir, ".quiver-gone-DDDDDDDDDDDD"));
    mkdirSync(join(dir, ".quiver-gone-0123"));
    const r = await sweep(0);
    expect(r.removed).toEqual([".quiver-gone-00112233aabb"]);
    expect(readdirSync(dir).sort()).toEqual(
      [
        ".quiver-gone-0123",
        ".quiver-gone-DDDDDDDDDDDD",
        ".quiver-gone-aaaaaaaaaaaa",
        ".quiver-gone-bbbbbbbbbbbb",
        "src",
      ].sort(),
    );
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret\n");
    expect(readFileSync(join(dir, "src", ".quiver-gone-cccccccccccc", "y.txt"), "utf8")).toBe("the person's\n");
  });
});
