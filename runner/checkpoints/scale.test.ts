// Checkpoints at the scale of a real work tree, on real folders with real git: one runner serves
// every workspace on one event loop, so a checkpoint of thousands of files must give the loop
// back every few milliseconds (a 5 ms probe's longest gap is measured while it runs; before, a
// checkpoint of 50,000 files held it 3.9 s). Limits are generous: the machine running this is shared.
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Workspace } from "../workspace/workspace";
import type { OpContext } from "../ops";
import { checkpointOps } from "./ops";

const base = mkdtempSync(join(tmpdir(), "quiver-cp-scale-"));
let dir: string;
let ws: Workspace;
let ctx: OpContext;
let n = 0;

const run = async (op: string, input: unknown) => {
  const o = checkpointOps[op];
  return o.run(o.input.parse(input), ctx);
};
const checkpoint = async () => {
  const r = await run("checkpoint.create", {});
  expect(r.ok, r.output).toBe(true);
  return r.meta as { commit: string; filesChanged: number };
};

/** `work`'s result and the longest the event loop went without a turn while it ran (ms). */
async function stallOf<T>(work: () => Promise<T>): Promise<{ result: T; stall: number }> {
  let last = performance.now();
  let stall = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 5);
  try {
    const result = await work();
    // A stall up to the very end is seen by no tick of the probe.
    stall = Math.max(stall, performance.now() - last);
    return { result, stall };
  } finally {
    clearInterval(probe);
  }
}

/** Folders 30 deep: the old code walked every component again for each file. */
const deep = (top: string, leaf: number) => join(top, ..."abcdefghijklmnopqrstuvwxyz1234".split(""), `leaf${leaf}`);

/** `count` files of one line each, `perLeaf` to a folder, under `top`; their workspace paths. */
function plant(top: string, count: number, perLeaf: number, text = (i: number) => `one ${i}\n`): string[] {
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const folder = deep(top, Math.floor(i / perLeaf));
    if (i % perLeaf === 0) mkdirSync(join(dir, folder), { recursive: true });
    const path = join(folder, `f${i}.txt`);
    writeFileSync(join(dir, path), text(i));
    paths.push(path);
  }
  return paths;
}

beforeEach(async () => {
  process.env.QUIVER_CHECKPOINT_DIR = join(base, "shadows");
  dir = join(base, `ws${++n}`);
  mkdirSync(dir);
  ws = await Workspace.open(dir, { watch: false });
  ctx = {
    sessionId: `s${n}`,
    workspace: ws,
    signal: new AbortController().signal,
    deadline: Date.now() + 120_000,
    progress() {},
    filesChanged() {},
  };
});

afterEach(() => ws?.dispose());

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
  delete process.env.QUIVER_CHECKPOINT_DIR;
});

describe("checkpoints of many files", () => {
  it("a checkpoint of 10,000 new files 30 folders deep gives the event loop back as it goes", async () => {
    plant("src", 10_000, 100);
    const { result, stall } = await stallOf(checkpoint);
    expect(result.filesChanged).toBe(10_000);
    // Before: every file walked again from the root, 30 opens each, all in one turn (3 s here).
    expect(stall).toBeLessThan(1000);
  });
});
