// A checkpoint restore whose runner is killed -9 while it changes files, with real processes: a
// child runs the restore and is stopped for good at the tenth file it puts in place (some files
// restored, the rest not, the folders it deletes already gone), then killed; a real runner
// started on the folder rolls the restore back before it answers anything, so the person finds
// every file as it was before the click (bytes, exec bit, permission bits, link target), what
// changed meanwhile outside the restore's paths left alone, and Restore then works again. A
// rollback killed in turn is run again at the next start.
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { spawnRunner, waitFor } from "../../server/testing/runner";
import { REPO_ROOT, runScript } from "../testing/child";
import { FakeServer, outsideTmp } from "../testing/root";
import { opContext } from "../testing/exec";
import { Workspace } from "../workspace/workspace";
import { checkpointOps } from "./ops";
import { restoreJournalPath } from "./restore-journal";

const ROOT = REPO_ROOT;
let base: string;
let dir: string;
let shadows: string;
let n = 0;

beforeEach(async () => {
  base ??= await outsideTmp("quiver-restore-killed-");
  dir = join(base, `ws${++n}`);
  shadows = join(base, `shadows${n}`);
  mkdirSync(dir);
  process.env.QUIVER_CHECKPOINT_DIR = shadows;
});
afterEach(() => delete process.env.QUIVER_CHECKPOINT_DIR);
afterAll(() => rmSync(base, { recursive: true, force: true }));

/**
 * Runs `body` in a node process of its own on the workspace, its file walks wrapped so that the
 * `stopAt`-th file put in place (a walk that creates, outside the runner's own .quiver- names)
 * prints "midway" and blocks forever: the test's SIGKILL lands exactly there.
 */
function child(body: string, stopAt: number) {
  const { p, exited, out } = runScript(
    base,
    `
    import { Workspace } from "${ROOT}/runner/workspace/workspace.ts";
    const ws = await Workspace.open(process.argv[2], { watch: false });
    const walk = ws.files.walk.bind(ws.files);
    let placed = 0;
    ws.files.walk = (input, opts) => {
      if (opts?.create && !input.startsWith(".quiver-") && ++placed === ${stopAt}) {
        console.log("midway");
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
      }
      return walk(input, opts);
    };
    ${body}
    console.log("finished");
  `,
    [dir],
  );
  return {
    async killAtMidway() {
      await waitFor(() => out().includes("midway") || undefined, 60_000, `the child to reach midway: ${out()}`);
      p.kill("SIGKILL");
      await exited;
      expect(out()).not.toContain("finished");
    },
  };
}

/** Every entry of the workspace but the runner's own leftovers: kind, bytes or target, bits. */
function state(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of readdirSync(dir, { recursive: true }).map(String).sort()) {
    if (rel.includes(".quiver-")) continue;
    const st = lstatSync(join(dir, rel));
    const bits = (st.mode & 0o777).toString(8);
    if (st.isSymbolicLink()) out[rel] = `link -> ${readlinkSync(join(dir, rel))}`;
    else if (st.isDirectory()) out[rel] = `dir ${bits}`;
    else out[rel] = `${bits} ${readFileSync(join(dir, rel), "utf8")}`;
  }
  return out;
}

/** Takes checkpoint C, then changes the workspace the way a turn would; returns C and the state after. */
async function checkpointThenChange(): Promise<{ commit: string; before: Record<string, string> }> {
  for (let i = 0; i < 30; i++) writeFileSync(join(dir, `f${String(i).padStart(2, "0")}.txt`), `old ${i}\n`);
  mkdirSync(join(dir, "lost"));
  for (let i = 0; i < 5; i++) writeFileSync(join(dir, "lost", `g${i}.txt`), `lost ${i}\n`);
  writeFileSync(join(dir, "run.sh"), "echo old\n", { mode: 0o755 });
  writeFileSync(join(dir, "secret.txt"), "old secret\n", { mode: 0o600 });
  writeFileSync(join(dir, "untouched.txt"), "same all along\n");
  symlinkSync("f00.txt", join(dir, "link"));
  const ws = await Workspace.open(dir, { watch: false });
  try {
    const op = checkpointOps["checkpoint.create"];
    const cp = await op.run(op.input.parse({}), opContext(ws));
    expect(cp.ok, cp.output).toBe(true);
    for (let i = 0; i < 30; i++) writeFileSync(join(dir, `f${String(i).padStart(2, "0")}.txt`), `new ${i}\n`);
    rmSync(join(dir, "lost"), { recursive: true });
    mkdirSync(join(dir, "made"));
    for (let i = 0; i < 5; i++) writeFileSync(join(dir, "made", `m${i}.txt`), `made ${i}\n`);
    writeFileSync(join(dir, "run.sh"), "echo new\n");
    chmodSync(join(dir, "run.sh"), 0o644);
    writeFileSync(join(dir, "secret.txt"), "new secret\n");
    chmodSync(join(dir, "secret.txt"), 0o600);
    unlinkSync(join(dir, "link"));
    symlinkSync("f01.txt", join(dir, "link"));
    return { commit: (cp.meta as { commit: string }).commit, before: state() };
  } finally {
    ws.dispose();
  }
}

const RESTORE = (commit: string) => `
  import { checkpointOps } from "${ROOT}/runner/checkpoints/ops.ts";
  import { opContext } from "${ROOT}/runner/testing/exec.ts";
  const op = checkpointOps["checkpoint.restore"];
  await op.run(op.input.parse({ to: "${commit}", dryRun: false, keepPersonEdits: false }), opContext(ws));
`;

/** A real runner on the folder; its first answer comes only once it serves the workspace. */
async function runnerServing(): Promise<{ server: FakeServer; stderr(): string; stop(): Promise<void> }> {
  const server = new FakeServer();
  const runner = spawnRunner({
    url: await server.listen(),
    workspace: dir,
    env: { NODE_ENV: "test", QUIVER_CHECKPOINT_DIR: shadows },
  });
  await server.hello();
  const r = await server.request("ide_read", { path: "untouched.txt" }, { timeoutMs: 60_000 });
  expect(r.ok, `${r.output}\n${runner.stderr()}`).toBe(true);
  return {
    server,
    stderr: runner.stderr,
    stop: async () => {
      await runner.stop();
      await server.close();
    },
  };
}

describe("a checkpoint restore whose runner is killed -9 midway", () => {
  it("is rolled back by the next runner before it serves anything: the files as before the click", async () => {
    const { commit, before } = await checkpointThenChange();
    await child(RESTORE(commit), 10).killAtMidway();
    // A mixture: what the restore deletes first is gone, nine files restored, the rest not.
    const mixed = state();
    expect(mixed["made"]).toBeUndefined();
    expect(mixed["f00.txt"]).toBe("644 old 0\n");
    expect(mixed["f29.txt"]).toBe("644 new 29\n");
    expect(existsSync(restoreJournalPath(dir))).toBe(true);
    // Meanwhile, outside the restore's paths (the person's editor on the host, say).
    writeFileSync(join(dir, "later.txt"), "written while the runner was down\n");

    const runner = await runnerServing();
    try {
      expect(state()).toEqual({ ...before, "later.txt": "644 written while the runner was down\n" });
      expect(existsSync(restoreJournalPath(dir))).toBe(false);
      // The five files of made/ it had deleted and the nine it had restored.
      // Its log line travels by a pipe, the connection by a socket: waited for, not read at once.
      const rolledBack = /rolled back a checkpoint restore .* 14 file\(s\) put back/;
      await waitFor(() => rolledBack.test(runner.stderr()) || undefined, 30_000, `the log: ${runner.stderr()}`);
      // The click can be made again, and this time it answers with its undo.
      const again = await runner.server.request(
        "checkpoint.restore",
        { to: commit, dryRun: false, keepPersonEdits: false },
        { timeoutMs: 60_000 },
      );
      expect(again.ok, again.output).toBe(true);
      expect(again.meta?.undoCommit).toMatch(/^[0-9a-f]{40}$/);
      expect(readFileSync(join(dir, "f29.txt"), "utf8")).toBe("old 29\n");
      expect(readlinkSync(join(dir, "link"))).toBe("f00.txt");
      expect(existsSync(restoreJournalPath(dir))).toBe(false);
    } finally {
      await runner.stop();
    }
  }, 180_000);

  it("a rollback killed in turn is run again at the next start", async () => {
    const { commit, before } = await checkpointThenChange();
    await child(RESTORE(commit), 10).killAtMidway();
    await child(
      `
      import { recoverRestore } from "${ROOT}/runner/checkpoints/recover.ts";
      await recoverRestore(ws, console.log);
    `,
      3,
    ).killAtMidway();
    expect(state()).not.toEqual(before);
    expect(existsSync(restoreJournalPath(dir))).toBe(true);

    const runner = await runnerServing();
    try {
      expect(state()).toEqual(before);
      expect(existsSync(restoreJournalPath(dir))).toBe(false);
    } finally {
      await runner.stop();
    }
  }, 180_000);

  it("a restore that ends leaves no record, so no later start rolls anything back", async () => {
    const { commit } = await checkpointThenChange();
    const ws = await Workspace.open(dir, { watch: false });
    try {
      const op = checkpointOps["checkpoint.restore"];
      const r = await op.run(op.input.parse({ to: commit, dryRun: false, keepPersonEdits: false }), opContext(ws));
      expect(r.ok, r.output).toBe(true);
      expect(existsSync(restoreJournalPath(dir))).toBe(false);
      expect(readdirSync(join(shadows, "restores"))).toEqual([]);
    } finally {
      ws.dispose();
    }
  });
});
