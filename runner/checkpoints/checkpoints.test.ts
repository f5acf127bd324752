// The shadow repository against a hostile workspace, on real folders with real git: planted
// filters, textconv, eol conversion, fsmonitor and hooks (the workspace's own .git, a nested
// repository, and the shadow's own config written behind its back) never run a program and never
// change a byte; links (even to outside) and modes round-trip; files over the cap are left out;
// the workspace's own repository is not touched. And the hunk revert on its own.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import {
  appendFileSync,
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Workspace } from "../workspace/workspace";
import type { OpContext } from "../ops";
import { checkpointOps, shadowOf } from "./ops";
import { revertHunk } from "./hunk";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "core.fsmonitor=false", ...args], { cwd, encoding: "utf8" });

describe("checkpoints in a hostile workspace", () => {
  let base: string;
  let dir: string;
  let ws: Workspace;
  const marks: string[] = [];
  let ctx: OpContext;
  const run = async (op: string, input: unknown) => {
    const o = checkpointOps[op];
    return o.run(o.input.parse(input), ctx);
  };

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), "quiver-cp-unit-"));
    process.env.QUIVER_CHECKPOINT_DIR = join(base, "shadows");
    process.env.QUIVER_CHECKPOINT_MAX_FILE_BYTES = "1000";
    dir = join(base, "ws");
    mkdirSync(dir);
    const mark = (name: string) => {
      const p = join(base, name);
      marks.push(p);
      return `touch ${p}`;
    };
    git(dir, "init", "-q", "-b", "main");
    writeFileSync(join(dir, "crlf.txt"), "one\r\ntwo\n");
    writeFileSync(join(dir, "tool.sh"), "#!/bin/sh\n");
    chmodSync(join(dir, "tool.sh"), 0o755);
    symlinkSync("/etc/hostname", join(dir, "out-link"));
    writeFileSync(join(dir, "huge.bin"), Buffer.alloc(5000, 1));
    writeFileSync(
      join(dir, ".gitattributes"),
      "* filter=evil diff=evil text eol=crlf ident working-tree-encoding=UTF-16\n",
    );
    git(dir, "config", "filter.evil.clean", `${mark("clean")}; cat`);
    git(dir, "config", "filter.evil.smudge", `${mark("smudge")}; cat`);
    git(dir, "config", "filter.evil.process", mark("process"));
    git(dir, "config", "diff.evil.textconv", mark("textconv"));
    git(dir, "config", "core.fsmonitor", mark("fsmonitor"));
    mkdirSync(join(dir, ".git", "hooks"), { recursive: true });
    for (const hook of ["post-index-change", "post-commit", "pre-commit", "reference-transaction"]) {
      writeFileSync(join(dir, ".git", "hooks", hook), `#!/bin/sh\n${mark(`hook-${hook}`)}\n`);
      chmodSync(join(dir, ".git", "hooks", hook), 0o755);
    }
    mkdirSync(join(dir, "nested"));
    git(join(dir, "nested"), "init", "-q");
    git(join(dir, "nested"), "config", "core.fsmonitor", mark("nested-fsmonitor"));
    writeFileSync(join(dir, "nested", "inner.txt"), "inner\n");
    ws = await Workspace.open(dir, { watch: false });
    ctx = {
      sessionId: "s1",
      workspace: ws,
      signal: new AbortController().signal,
      deadline: Date.now() + 60_000,
      progress() {},
      filesChanged() {},
    };
  });

  afterAll(() => {
    ws?.dispose();
    rmSync(base, { recursive: true, force: true });
    delete process.env.QUIVER_CHECKPOINT_DIR;
    delete process.env.QUIVER_CHECKPOINT_MAX_FILE_BYTES;
  });

  it("records bytes, modes and links exactly, runs nothing planted, leaves out huge files and nested repositories", async () => {
    const headBefore = existsSync(join(dir, ".git", "index"));
    const first = await run("checkpoint.create", {});
    expect(first.ok).toBe(true);
    const meta = first.meta as { commit: string; skipped: { path: string }[] };
    expect(meta.skipped.map((s) => s.path)).toEqual(["huge.bin"]);
    // The agent writes planted settings into the shadow repository itself (as an unsandboxed command could).
    appendFileSync(
      join(shadowOf(ws).dir, "config"),
      `[core]\n\tfsmonitor = touch ${join(base, "shadow-fsmonitor")}\n[filter "evil"]\n\tclean = touch ${join(base, "shadow-clean")}\n`,
    );
    marks.push(join(base, "shadow-fsmonitor"), join(base, "shadow-clean"));
    writeFileSync(join(dir, "crlf.txt"), "changed\r\n");
    chmodSync(join(dir, "tool.sh"), 0o644);
    rmSync(join(dir, "out-link"));
    symlinkSync("crlf.txt", join(dir, "out-link"));
    const diff = await run("checkpoint.diff", { from: meta.commit });
    expect((diff.meta as { files: { path: string }[] }).files.map((f) => f.path)).toEqual([
      "crlf.txt",
      "out-link",
      "tool.sh",
    ]);
    const restored = await run("checkpoint.restore", { to: meta.commit, dryRun: false, keepPersonEdits: true });
    expect(restored.ok).toBe(true);
    expect(readFileSync(join(dir, "crlf.txt"), "utf8")).toBe("one\r\ntwo\n");
    expect(lstatSync(join(dir, "tool.sh")).mode & 0o777).toBe(0o755);
    expect(readlinkSync(join(dir, "out-link"))).toBe("/etc/hostname");
    expect(readFileSync(join(dir, "huge.bin")).length).toBe(5000);
    expect(readFileSync(join(dir, "nested", "inner.txt"), "utf8")).toBe("inner\n");
    expect(marks.filter((m) => existsSync(m))).toEqual([]);
    // The workspace's own repository: no index made, no commit, no ref.
    expect(existsSync(join(dir, ".git", "index"))).toBe(headBefore);
    expect(git(dir, "for-each-ref")).toBe("");
  });

  it("keeps the shadow outside the workspace", () => {
    expect(shadowOf(ws).dir.startsWith(`${dir}/`)).toBe(false);
    expect(existsSync(join(shadowOf(ws).dir, "HEAD"))).toBe(true);
  });
});

describe("reverting one hunk", () => {
  const file = Array.from({ length: 30 }, (_, i) => `l${i + 1}\n`).join("");
  const edited = file.replace("l2\n", "L2\n").replace("l15\n", "L15\n").replace("l28\n", "L28\n");

  it("takes out exactly that hunk, even when the file moved under it", () => {
    const hunk = [" l12", " l13", " l14", "-l15", "+L15", " l16", " l17", " l18"];
    expect(revertHunk(edited, 12, hunk)).toBe(file.replace("l2\n", "L2\n").replace("l28\n", "L28\n"));
    const shifted = `new top\n${edited}`;
    expect(revertHunk(shifted, 12, hunk)).toBe(`new top\n${file.replace("l2\n", "L2\n").replace("l28\n", "L28\n")}`);
  });

  it("is a conflict (null) when the hunk's lines are no longer there, and honours a missing last newline", () => {
    expect(revertHunk(edited.replace("L15", "other"), 12, [" l14", "-l15", "+L15", " l16"])).toBeNull();
    expect(
      revertHunk("a\nB", 1, [" a", "-b", "\\ No newline at end of file", "+B", "\\ No newline at end of file"]),
    ).toBe("a\nb");
  });
});
