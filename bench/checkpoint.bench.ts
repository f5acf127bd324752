// What a checkpoint costs (issue 27): a workspace of 10,000 files / 200 MB, checkpointed into
// the runner's shadow repository (runner/checkpoints/, the same op the server calls), the first
// time and again after a few changes (20 files edited, 5 added, 5 deleted), against `git add -A
// && git commit` on a copy of the same files in the same run. Time is wall clock: the first of
// each once (cold for git, warm for the page cache: the copy was just written), the later one
// the median of BENCH_CHECKPOINT_ROUNDS rounds (default 7), which of the two goes first
// alternating, as one round of some 200 ms moves by tens of percent on a shared machine. Disk
// is what the shadow folder or .git grew by. Goals: within 2x of git's time and 1.5x of its disk.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { opContext } from "../runner/testing/exec";
import { Workspace } from "../runner/workspace/workspace";
import { goal, median, printTable, ratio } from "./lib";

const FILES = 10_000;
const ROUNDS = Number(process.env.BENCH_CHECKPOINT_ROUNDS ?? 7);
const TOTAL = 200 * 1024 * 1024;
const base = realpathSync(mkdtempSync(join(tmpdir(), "quiver-bench-cp-")));
process.env.QUIVER_CHECKPOINT_DIR = join(base, "shadows");
const { checkpointOps, shadowOf } = await import("../runner/checkpoints/ops");

/** Bytes a folder takes on disk (du). */
const du = (dir: string) => Number(execFileSync("du", ["-sb", dir], { encoding: "utf8" }).split("\t")[0]);
/** Text-like content (base64 of random bytes: compresses as source code roughly does, ~25%). */
const content = (size: number) =>
  randomBytes(Math.ceil((size * 3) / 4))
    .toString("base64")
    .slice(0, size)
    .replace(/(.{80})/g, "$1\n");

function makeTree(root: string): void {
  const per = Math.floor(TOTAL / FILES);
  for (let i = 0; i < FILES; i++) {
    const dir = join(root, `pkg${i % 50}`, `mod${i % 20}`);
    if (i < 1000) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `file${i}.txt`), content(per));
  }
  writeFileSync(join(root, ".gitignore"), "node_modules/\n");
}

/** Round `round`'s changes: 20 files edited, 5 added, 5 deleted (other files each round). */
function change(root: string, round: number): void {
  for (let i = 0; i < 20; i++)
    writeFileSync(join(root, `pkg${i % 50}`, `mod${i % 20}`, `file${i}.txt`), content(20_000));
  for (let i = 0; i < 5; i++) writeFileSync(join(root, `pkg${i}`, `added${round}-${i}.txt`), content(10_000));
  for (let i = 100 + 5 * round; i < 105 + 5 * round; i++)
    unlinkSync(join(root, `pkg${i % 50}`, `mod${i % 20}`, `file${i}.txt`));
}

const time = async (fn: () => unknown) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

const gitEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "b",
  GIT_AUTHOR_EMAIL: "b@b",
  GIT_COMMITTER_NAME: "b",
  GIT_COMMITTER_EMAIL: "b@b",
};
const gitCommit = (dir: string) =>
  execFileSync("sh", ["-c", "git add -A && git commit -q -m checkpoint"], { cwd: dir, env: gitEnv });

try {
  const ws = join(base, "ws");
  const copy = join(base, "copy");
  mkdirSync(ws);
  makeTree(ws);
  execFileSync("cp", ["-a", ws, copy]);
  execFileSync("git", ["init", "-q"], { cwd: copy, env: gitEnv });
  const size = du(ws);

  const workspace = await Workspace.open(ws, { watch: false });
  const ctx = opContext(workspace);
  const create = async (parent?: string) => {
    const r = await checkpointOps["checkpoint.create"].run(parent ? { parent } : {}, ctx);
    if (!r.ok) throw new Error(r.output);
    return (r.meta as { commit: string }).commit;
  };
  const shadowDir = shadowOf(workspace).dir;
  const shadow0 = du(shadowDir);
  const git0 = du(join(copy, ".git"));

  let first = "";
  const cpFirst = await time(async () => (first = await create()));
  const cpFirstDisk = du(shadowDir) - shadow0;
  const gitFirst = await time(() => gitCommit(copy));
  const gitFirstDisk = du(join(copy, ".git")) - git0;

  const cpTimes: number[] = [];
  const gitTimes: number[] = [];
  let cpLaterDisk = 0;
  let gitLaterDisk = 0;
  let parent = first;
  for (let round = 0; round < ROUNDS; round++) {
    change(ws, round);
    change(copy, round);
    const shadow1 = du(shadowDir);
    const git1 = du(join(copy, ".git"));
    const checkpoint = async () => cpTimes.push(await time(async () => (parent = await create(parent))));
    const commit = async () => gitTimes.push(await time(() => gitCommit(copy)));
    for (const step of round % 2 === 0 ? [checkpoint, commit] : [commit, checkpoint]) await step();
    // The disk of the first later round: each one after it differs only in the random bytes.
    if (round === 0) [cpLaterDisk, gitLaterDisk] = [du(shadowDir) - shadow1, du(join(copy, ".git")) - git1];
  }
  workspace.dispose();
  const cpLater = median(cpTimes);
  const gitLater = median(gitTimes);

  const span = (xs: number[]) => `${Math.min(...xs).toFixed(0)}…${Math.max(...xs).toFixed(0)}`;
  const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
  printTable(
    `checkpoint vs git add -A && git commit, ${FILES} files / ${mb(size)} MB (later: median of ${ROUNDS} rounds)`,
    ["case", "checkpoint ms", "git ms", "time ratio", "checkpoint MB", "git MB", "disk ratio"],
    [
      [
        "first",
        cpFirst.toFixed(0),
        gitFirst.toFixed(0),
        ratio(cpFirst, gitFirst),
        mb(cpFirstDisk),
        mb(gitFirstDisk),
        ratio(cpFirstDisk, gitFirstDisk),
      ],
      [
        `after 20 edits, 5 new, 5 deleted (median of ${ROUNDS})`,
        `${cpLater.toFixed(0)} (${span(cpTimes)})`,
        `${gitLater.toFixed(0)} (${span(gitTimes)})`,
        ratio(cpLater, gitLater),
        mb(cpLaterDisk),
        mb(gitLaterDisk),
        ratio(cpLaterDisk, gitLaterDisk),
      ],
    ],
  );
  goal(
    "first checkpoint within 2x of git add -A && git commit",
    cpFirst < 2 * gitFirst,
    `${cpFirst.toFixed(0)} ms vs ${gitFirst.toFixed(0)} ms`,
  );
  goal(
    "later checkpoint within 2x of git add -A && git commit",
    cpLater < 2 * gitLater,
    `${cpLater.toFixed(0)} ms vs ${gitLater.toFixed(0)} ms`,
  );
  goal(
    "a checkpoint's disk within 1.5x of git's",
    cpFirstDisk < 1.5 * gitFirstDisk && cpLaterDisk < 1.5 * Math.max(gitLaterDisk, 64 * 1024),
    `${mb(cpFirstDisk)} / ${mb(cpLaterDisk)} MB vs ${mb(gitFirstDisk)} / ${mb(gitLaterDisk)} MB`,
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}
