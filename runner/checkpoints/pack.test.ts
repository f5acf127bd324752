// The shadow's loose objects are packed once there are more than git's gc.auto of them: a
// checkpoint of 8,000 small files leaves one pack and no loose copies, every checkpoint still
// restores byte for byte, and an object no checkpoint reaches any more is kept (pruning is
// forget.ts's, with its grace). Real git on real folders.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Workspace } from "../workspace/workspace";
import type { OpContext } from "../ops";
import { checkpointOps, shadowOf } from "./ops";
import { looseEstimate, packCount } from "./pack";
import { opContext } from "../testing/exec";

const FILES = 8_000;

describe("packing the shadow", () => {
  let base: string;
  let dir: string;
  let ws: Workspace;
  let ctx: OpContext;
  const run = async (op: string, input: unknown) => {
    const o = checkpointOps[op];
    return o.run(o.input.parse(input), ctx);
  };
  const write = (tag: string) => {
    for (let i = 0; i < FILES; i++) writeFileSync(join(dir, "d", `f${i}.txt`), `${tag} ${i}\n`);
  };

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), "quiver-cp-pack-"));
    process.env.QUIVER_CHECKPOINT_DIR = join(base, "shadows");
    dir = join(base, "ws");
    mkdirSync(join(dir, "d"), { recursive: true });
    ws = await Workspace.open(dir, { watch: false });
    ctx = opContext(ws);
  });

  afterAll(() => {
    ws?.dispose();
    rmSync(base, { recursive: true, force: true });
    delete process.env.QUIVER_CHECKPOINT_DIR;
  });

  it("packs after a checkpoint past git's threshold, and every checkpoint still restores", async () => {
    write("one");
    const first = await run("checkpoint.create", {});
    expect(first.ok).toBe(true);
    const shadow = shadowOf(ws);
    // The pack runs in the shadow's turn after the answer: the next operation waits for it.
    await shadow.serial(async () => undefined);
    expect(looseEstimate(shadow)).toBe(0);
    expect(packCount(shadow)).toBe(1);
    const loose = readdirSync(join(shadow.dir, "objects")).filter((d) => /^[0-9a-f]{2}$/.test(d));
    expect(loose.flatMap((d) => readdirSync(join(shadow.dir, "objects", d)))).toEqual([]);

    write("two");
    const second = await run("checkpoint.create", { parent: (first.meta as { commit: string }).commit });
    await shadow.serial(async () => undefined);
    expect(packCount(shadow)).toBe(2);

    const back = await run("checkpoint.restore", {
      to: (first.meta as { commit: string }).commit,
      dryRun: false,
      keepPersonEdits: false,
      paths: ["d/f7.txt", `d/f${FILES - 1}.txt`],
    });
    expect(back.ok).toBe(true);
    expect(readFileSync(join(dir, "d", "f7.txt"), "utf8")).toBe("one 7\n");
    expect(readFileSync(join(dir, "d", `f${FILES - 1}.txt`), "utf8")).toBe(`one ${FILES - 1}\n`);
    const again = await run("checkpoint.restore", {
      to: (second.meta as { commit: string }).commit,
      dryRun: false,
      keepPersonEdits: false,
      paths: ["d/f7.txt"],
    });
    expect(again.ok).toBe(true);
    expect(readFileSync(join(dir, "d", "f7.txt"), "utf8")).toBe("two 7\n");
  }, 240_000);
});
