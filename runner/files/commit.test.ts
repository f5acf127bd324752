// ide_commit on real git repositories: everything changed inside the workspace folder in one
// commit, the repository's hooks not run, and clear refusals (no repository, nothing to commit).
import { execFileSync, spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PERSON_FILE_OPS, PersonChanges } from "../../server/protocol/person-file-ops";
import { opContext } from "../testing/exec";
import { Workspace } from "../workspace/workspace";
import { explainGitError } from "./commit";
import { personFileOps } from "./person";

let repo: string;
beforeEach(async () => {
  repo = await mkdtemp(join(tmpdir(), "quiver-commit-"));
});
afterEach(() => rm(repo, { recursive: true, force: true }));

const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, encoding: "utf8" });
const initRepo = async () => {
  git("init", "-q", "-b", "main");
  git("config", "user.name", "Tester");
  git("config", "user.email", "tester@example.com");
  await writeFile(join(repo, "a.txt"), "one\n");
  await writeFile(join(repo, "gone.txt"), "bye\n");
  await mkdir(join(repo, "sub"));
  await writeFile(join(repo, "sub/in.txt"), "in\n");
  git("add", ".");
  git("commit", "-qm", "start");
};
const op = (ws: Workspace, name: "ide_commit" | "ide_changes", input: unknown) =>
  personFileOps[name].run(PERSON_FILE_OPS[name].parse(input), opContext(ws));

describe("ide_commit", () => {
  it("commits every change in the workspace (new, modified, deleted) without running the repository's hooks", async () => {
    await initRepo();
    // A hook that would leave a mark: the runner must not run the repository's programs.
    await writeFile(join(repo, ".git/hooks/pre-commit"), `#!/bin/sh\ntouch "${join(repo, "hook-ran")}"\n`);
    await chmod(join(repo, ".git/hooks/pre-commit"), 0o755);
    await writeFile(join(repo, "a.txt"), "two\n");
    await rm(join(repo, "gone.txt"));
    await writeFile(join(repo, "new.txt"), "new\n");
    const ws = await Workspace.open(repo, { watch: false });

    const r = await op(ws, "ide_commit", { message: "Update a, add new\n\nBody line." });
    expect(r).toMatchObject({ ok: true, output: expect.stringMatching(/^committed [0-9a-f]+: Update a, add new$/) });
    expect(git("log", "-1", "--format=%an|%s|%b").trim()).toBe("Tester|Update a, add new|Body line.");
    expect(git("show", "--name-status", "--format=", "HEAD").trim().split("\n").sort()).toEqual([
      "A\tnew.txt",
      "D\tgone.txt",
      "M\ta.txt",
    ]);
    expect(existsSync(join(repo, "hook-ran"))).toBe(false);
    expect(PersonChanges.parse((await op(ws, "ide_changes", {})).meta).files).toEqual([]);
    expect(await op(ws, "ide_commit", { message: "again" })).toMatchObject({
      ok: false,
      output: "Nothing to commit: the workspace has no changes.",
    });
  });

  it("a workspace in a subfolder commits that subfolder only", async () => {
    await initRepo();
    await writeFile(join(repo, "a.txt"), "outside change\n");
    await writeFile(join(repo, "sub/in.txt"), "inside change\n");
    const ws = await Workspace.open(join(repo, "sub"), { watch: false });
    expect(await op(ws, "ide_commit", { message: "sub only" })).toMatchObject({ ok: true });
    expect(git("show", "--name-only", "--format=", "HEAD").trim()).toBe("sub/in.txt");
    expect(git("status", "--porcelain").trim()).toBe("M a.txt");
  });

  it("refuses outside a repository, and an empty message", async () => {
    const ws = await Workspace.open(repo, { watch: false });
    expect(await op(ws, "ide_commit", { message: "x" })).toMatchObject({
      ok: false,
      output: expect.stringContaining("not in a git repository"),
    });
    expect(() => PERSON_FILE_OPS.ide_commit.parse({ message: "   " })).toThrow();
  });

  it("says how to set an identity when git does not know who is committing", () => {
    expect(explainGitError("Author identity unknown\n\n*** Please tell me who you are.\n")).toContain(
      "git config --global user.name",
    );
    expect(explainGitError("fatal: something else\n")).toBe("fatal: something else");
  });
});

describe("ide_commit after a git killed mid-write", () => {
  it("removes an index lock no process holds, and leaves one a live git holds", async () => {
    await initRepo();
    await writeFile(join(repo, "a.txt"), "two\n");
    const ws = await Workspace.open(repo, { watch: false });
    // A live holder (as a running git would be): the lock stays and the commit says why.
    const holder = spawn("bash", ["-c", "exec 3<>.git/index.lock; exec sleep 60"], { cwd: repo, stdio: "ignore" });
    try {
      await expect.poll(() => existsSync(join(repo, ".git/index.lock")), { timeout: 10_000 }).toBe(true);
      await new Promise((r) => setTimeout(r, 200)); // its descriptor is open by now
      const held = await op(ws, "ide_commit", { message: "while held" });
      expect(held).toMatchObject({ ok: false });
      expect(held.output).toMatch(/index\.lock/);
      expect(existsSync(join(repo, ".git/index.lock"))).toBe(true);
    } finally {
      holder.kill("SIGKILL");
    }
    // Its holder killed, the lock is a leftover: the next commit removes it and goes through.
    await new Promise((r) => holder.once("exit", r));
    const r = await op(ws, "ide_commit", { message: "after the kill" });
    expect(r).toMatchObject({ ok: true, output: expect.stringMatching(/^committed [0-9a-f]+: after the kill$/) });
    expect(existsSync(join(repo, ".git/index.lock"))).toBe(false);
  });

  it("never follows a .git link to remove a lock elsewhere", async () => {
    const other = await mkdtemp(join(tmpdir(), "quiver-other-git-"));
    try {
      execFileSync("git", ["init", "-q", "-b", "main"], { cwd: other });
      await writeFile(join(other, ".git/index.lock"), "");
      await symlink(join(other, ".git"), join(repo, ".git"));
      await writeFile(join(repo, "a.txt"), "x\n");
      const ws = await Workspace.open(repo, { watch: false });
      expect((await op(ws, "ide_commit", { message: "through the link" })).ok).toBe(false);
      expect(existsSync(join(other, ".git/index.lock"))).toBe(true);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});
