// What a checkpoint restore holds of the runner's event loop, which every workspace on the
// runner shares: a restore that rewrites 2,000 files (runner/checkpoints/, the op the server
// calls), with a 2 ms timer measuring the loop's longest stall and the loop's busy time (event
// loop utilization), beside the same files written and fsynced one after the other on the loop
// in the same run (what a disk's fsyncs alone cost here). A report, with no goal: the staging's
// fsyncs moved off the loop (runner/checkpoints/stage.ts), and what the loop still does per file
// is measured here for the next change to compare against (BENCH_RESTORE_FILES to vary).
//   npm run bench -- restore-loop
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  realpathSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { opContext } from "../runner/testing/exec";
import { longestStall } from "../runner/testing/event-loop";
import { Workspace } from "../runner/workspace/workspace";
import { median, printTable } from "./lib";

const FILES = Number(process.env.BENCH_RESTORE_FILES ?? 2_000);
const ROUNDS = 3;
const base = realpathSync(mkdtempSync(join(tmpdir(), "quiver-bench-restore-")));
process.env.QUIVER_CHECKPOINT_DIR = join(base, "shadows");
const { checkpointOps } = await import("../runner/checkpoints/ops");

/** Runs `fn`; its wall time, the loop's longest stall (a 2 ms timer) and busy time meanwhile (ms). */
async function stalls(fn: () => Promise<unknown>): Promise<{ wall: number; longest: number; held: number }> {
  const start = performance.now();
  const elu = performance.eventLoopUtilization();
  const { stallMs } = await longestStall(fn);
  return { wall: performance.now() - start, longest: stallMs, held: performance.eventLoopUtilization(elu).active };
}

const content = (i: number, round: number) => `export const value${i} = ${round};\n`.repeat(20);

try {
  const ws = join(base, "ws");
  for (let i = 0; i < FILES; i++) {
    mkdirSync(join(ws, `dir${i % 40}`), { recursive: true });
    writeFileSync(join(ws, `dir${i % 40}`, `file${i}.ts`), content(i, 0));
  }
  const workspace = await Workspace.open(ws, { watch: false });
  const ctx = opContext(workspace);
  const restore: { wall: number; longest: number; held: number }[] = [];
  const before: { wall: number; longest: number; held: number }[] = [];
  const old = join(base, "old");
  for (let round = 1; round <= ROUNDS; round++) {
    const cp = await checkpointOps["checkpoint.create"].run({}, ctx);
    if (!cp.ok) throw new Error(cp.output);
    for (let i = 0; i < FILES; i++) writeFileSync(join(ws, `dir${i % 40}`, `file${i}.ts`), content(i, round));
    restore.push(
      await stalls(async () => {
        const r = await checkpointOps["checkpoint.restore"].run(
          { to: (cp.meta as { commit: string }).commit, dryRun: false, keepPersonEdits: false },
          ctx,
        );
        if (!r.ok) throw new Error(r.output);
      }),
    );
    mkdirSync(old);
    before.push(
      await stalls(async () => {
        for (let i = 0; i < FILES; i++) {
          const fd = openSync(join(old, String(i)), "wx", 0o600);
          writeSync(fd, content(i, round));
          fsyncSync(fd);
          closeSync(fd);
        }
      }),
    );
    rmSync(old, { recursive: true });
  }
  workspace.dispose();
  printTable(
    `the runner's event loop while ${FILES} files are restored (ms, median of ${ROUNDS} rounds)`,
    ["case", "longest stall", "loop held", "wall"],
    [
      [
        "checkpoint restore",
        median(restore.map((r) => r.longest)).toFixed(1),
        median(restore.map((r) => r.held)).toFixed(0),
        median(restore.map((r) => r.wall)).toFixed(0),
      ],
      [
        "the same files written and fsynced on the loop",
        median(before.map((r) => r.longest)).toFixed(1),
        median(before.map((r) => r.held)).toFixed(0),
        median(before.map((r) => r.wall)).toFixed(0),
      ],
    ],
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}
