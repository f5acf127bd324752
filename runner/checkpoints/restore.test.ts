// Restores that must not lose the person's files, on real folders with real git: what the target
// checkpoint left out (ignored by its own .gitignore files however the agent changed them since,
// over the size cap, a nested repository) is never deleted; every blob is read before anything
// changes, a piece at a time (git's in-memory output capped far below the files restored); a
// restore that fails partway still hands back its undo; permission bits are kept.
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Workspace } from "../workspace/workspace";
import type { OpContext } from "../ops";
import { checkpointOps } from "./ops";
import { gitLimits } from "./shadow";

const base = mkdtempSync(join(tmpdir(), "quiver-cp-restore-"));
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
  return (r.meta as { commit: string }).commit;
};
const restore = (to: string, dryRun = false) => run("checkpoint.restore", { to, dryRun, keepPersonEdits: false });
const paths = (r: { meta?: unknown }) => (r.meta as { changes: { path: string }[] }).changes.map((c) => c.path).sort();
const sh = (cmd: string) => execFileSync("sh", ["-c", cmd], { cwd: dir });
const read = (p: string) => readFileSync(join(dir, p), "utf8");
const mode = (p: string) => statSync(join(dir, p)).mode & 0o777;

beforeEach(async () => {
  process.env.QUIVER_CHECKPOINT_DIR = join(base, "shadows");
  process.env.QUIVER_CHECKPOINT_MAX_FILE_BYTES = "200000";
  dir = join(base, `ws${++n}`);
  mkdirSync(dir);
  ws = await Workspace.open(dir, { watch: false });
  ctx = {
    sessionId: `s${n}`,
    workspace: ws,
    signal: new AbortController().signal,
    deadline: Date.now() + 60_000,
    progress() {},
    filesChanged() {},
  };
});

afterEach(() => {
  ws?.dispose();
  gitLimits.maxOutput = 64 * 1024 * 1024;
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
  delete process.env.QUIVER_CHECKPOINT_DIR;
  delete process.env.QUIVER_CHECKPOINT_MAX_FILE_BYTES;
});

describe("what the target checkpoint left out", () => {
  const person = () => {
    writeFileSync(join(dir, ".gitignore"), ".env\nlocal.db\nbuild/\n");
    writeFileSync(join(dir, ".env"), "API=person-secret\n");
    writeFileSync(join(dir, "local.db"), "dbdata\n");
    mkdirSync(join(dir, "build"));
    writeFileSync(join(dir, "build", "out.o"), "object\n");
    writeFileSync(join(dir, "app.ts"), "code\n");
  };
  const kept = () => {
    expect(read(".env")).toBe("API=person-secret\n");
    expect(read("local.db")).toBe("dbdata\n");
    expect(read("build/out.o")).toBe("object\n");
  };

  it("keeps the person's ignored files when the agent removed the .gitignore", async () => {
    person();
    const before = await checkpoint();
    sh("rm .gitignore; echo changed > app.ts; echo evil > evil.ts");
    await checkpoint();
    const preview = await restore(before, true);
    expect(paths(preview)).toEqual([".gitignore", "app.ts", "evil.ts"]);
    const r = await restore(before);
    expect(r.ok, r.output).toBe(true);
    expect(paths(r)).toEqual([".gitignore", "app.ts", "evil.ts"]);
    kept();
    expect(read("app.ts")).toBe("code\n");
    expect(existsSync(join(dir, "evil.ts"))).toBe(false);
    expect(read(".gitignore")).toBe(".env\nlocal.db\nbuild/\n");
  });

  it("keeps them when the agent un-ignores them with `!` lines, and in a nested .gitignore it removed", async () => {
    person();
    mkdirSync(join(dir, "sub", "deep"), { recursive: true });
    writeFileSync(join(dir, "sub", ".gitignore"), "*.key\n!public.key\n");
    writeFileSync(join(dir, "sub", "deep", "id.key"), "private\n");
    writeFileSync(join(dir, "sub", "public.key"), "public\n");
    const before = await checkpoint();
    sh("printf '!.env\\n!local.db\\n!build/\\n' >> .gitignore; rm sub/.gitignore; echo new > sub/made.key");
    await checkpoint();
    const r = await restore(before);
    expect(r.ok, r.output).toBe(true);
    // sub/made.key is the agent's, yet the target's rules ignore it: the target left it out too.
    expect(paths(r)).toEqual([".gitignore", "sub/.gitignore"]);
    kept();
    expect(read("sub/deep/id.key")).toBe("private\n");
    expect(read("sub/public.key")).toBe("public\n");
  });

  it("still deletes what the agent made and hid through the workspace's own .git/info/exclude", async () => {
    person();
    git(dir, "init", "-q");
    const before = await checkpoint();
    sh("echo evil > evil.ts; echo evil.ts >> .git/info/exclude; echo '*.ts' > .git/info/exclude");
    await checkpoint();
    const r = await restore(before);
    expect(paths(r)).toEqual(["evil.ts"]);
    expect(existsSync(join(dir, "evil.ts"))).toBe(false);
    kept();
  });

  it("keeps a file that was over the size cap and a nested repository's files", async () => {
    writeFileSync(join(dir, "huge.bin"), Buffer.alloc(300_000, 1));
    mkdirSync(join(dir, "nested"));
    git(join(dir, "nested"), "init", "-q");
    writeFileSync(join(dir, "nested", "inner.txt"), "inner\n");
    writeFileSync(join(dir, "app.ts"), "code\n");
    const before = await checkpoint();
    // The agent shrinks the big file under the cap and unmakes the nested repository: both now show up.
    sh("head -c 10 /dev/zero > huge.bin; rm -rf nested/.git; echo evil > evil.ts");
    await checkpoint();
    const r = await restore(before);
    expect(paths(r)).toEqual(["evil.ts"]);
    expect(statSync(join(dir, "huge.bin")).size).toBe(10);
    expect(read("nested/inner.txt")).toBe("inner\n");
  });
});

describe("reading the target before changing anything", () => {
  it("restores files far past git's output cap, reading them a piece at a time", async () => {
    writeFileSync(join(dir, "app.ts"), "good\n");
    mkdirSync(join(dir, "assets"));
    for (let i = 0; i < 20; i++) writeFileSync(join(dir, "assets", `a${i}.bin`), Buffer.alloc(150_000, i));
    const before = await checkpoint();
    sh("rm -rf assets; echo EVIL > app.ts; echo evil > evil.ts");
    await checkpoint();
    // 3 MB to write, git may hand back 256 KiB: nothing of the files' size goes through memory.
    gitLimits.maxOutput = 256 * 1024;
    const r = await restore(before);
    expect(r.ok, r.output).toBe(true);
    expect(read("app.ts")).toBe("good\n");
    expect(existsSync(join(dir, "evil.ts"))).toBe(false);
    for (let i = 0; i < 20; i++)
      expect(readFileSync(join(dir, "assets", `a${i}.bin`)).equals(Buffer.alloc(150_000, i))).toBe(true);
    // The stage folder is gone.
    expect(readdirSync(dir).sort()).toEqual(["app.ts", "assets"]);
  });

  it("changes nothing when what it would write cannot be staged (the disk limit refuses)", async () => {
    writeFileSync(join(dir, "app.ts"), "good\n");
    writeFileSync(join(dir, "data.txt"), "precious\n");
    const before = await checkpoint();
    sh("echo EVIL > app.ts; rm data.txt; echo evil > evil.ts");
    await checkpoint();
    let asked = 0;
    ws.files.writeGuard = {
      before(bytes, input) {
        if (++asked === 2) throw new Error(`the disk limit refuses ${bytes} bytes for ${input}`);
      },
      failed: (err) => err,
    };
    const r = await restore(before).finally(() => (ws.files.writeGuard = undefined));
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/nothing was changed: .*disk limit refuses/);
    expect(read("app.ts")).toBe("EVIL\n");
    expect(read("evil.ts")).toBe("evil\n");
    expect(readdirSync(dir).sort()).toEqual(["app.ts", "evil.ts"]);
  });

  it("hands back its undo when a file cannot be written, and the undo puts everything back", async () => {
    writeFileSync(join(dir, ".gitignore"), "*.keep\n");
    writeFileSync(join(dir, "app.ts"), "good\n");
    writeFileSync(join(dir, "data"), "a file\n");
    const before = await checkpoint();
    // `data` becomes a folder holding an ignored file: the restore cannot put the file back there.
    sh("echo EVIL > app.ts; echo evil > evil.ts; rm data; mkdir data; echo x > data/x.keep");
    await checkpoint();
    const r = await restore(before);
    expect(r.ok, r.output).toBe(true);
    const meta = r.meta as { undoCommit: string; failed: { path: string }[] };
    expect(meta.failed.map((f) => f.path)).toEqual(["data"]);
    expect(r.output).toMatch(/restored 2 file\(s\).*not restored: data/);
    expect(read("app.ts")).toBe("good\n");
    const undo = await restore(meta.undoCommit);
    expect(undo.ok, undo.output).toBe(true);
    expect(read("app.ts")).toBe("EVIL\n");
    expect(read("evil.ts")).toBe("evil\n");
    expect(read("data/x.keep")).toBe("x\n");
  });
});

describe("permission bits", () => {
  it("keeps a file's own bits (the exec bit as git has it), and Undo puts a deleted 0600 file back as 0600", async () => {
    writeFileSync(join(dir, "secret.txt"), "one\n");
    chmodSync(join(dir, "secret.txt"), 0o600);
    writeFileSync(join(dir, "tool.sh"), "#!/bin/sh\n");
    chmodSync(join(dir, "tool.sh"), 0o700);
    const before = await checkpoint();
    sh("echo two > secret.txt; chmod 600 tool.sh; echo 'echo hi' >> tool.sh");
    await checkpoint();
    const r = await restore(before);
    expect(r.ok, r.output).toBe(true);
    expect(read("secret.txt")).toBe("one\n");
    expect(mode("secret.txt")).toBe(0o600);
    expect(mode("tool.sh")).toBe(0o700);

    // A restore to a checkpoint without the person's new 0600 key deletes it; Undo brings it back 0600.
    const empty = await checkpoint();
    writeFileSync(join(dir, "id.key"), "private\n");
    chmodSync(join(dir, "id.key"), 0o600);
    const gone = await restore(empty);
    expect(existsSync(join(dir, "id.key"))).toBe(false);
    const undo = await restore((gone.meta as { undoCommit: string }).undoCommit);
    expect(undo.ok, undo.output).toBe(true);
    expect(read("id.key")).toBe("private\n");
    expect(mode("id.key")).toBe(0o600);
  });
});

function git(cwd: string, ...args: (string | { input: string })[]): string {
  const opts = typeof args.at(-1) === "object" ? (args.pop() as { input: string }) : undefined;
  return execFileSync("git", ["-c", "core.fsmonitor=false", ...(args as string[])], {
    cwd,
    encoding: "utf8",
    ...(opts ? { input: opts.input } : {}),
  });
}
