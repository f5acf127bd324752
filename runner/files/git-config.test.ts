// A repository whose configuration names programs (planted by the agent's shell: .git/config,
// hooks, .gitattributes): the runner's own git for the Changes panel, git_diff, a file's earlier
// version and Commit must run none of them. Each planted program would leave a mark.
import { execFileSync } from "node:child_process";
import { appendFile, chmod, mkdir, mkdtemp, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { PERSON_FILE_OPS } from "../../server/protocol/person-file-ops";
import { opContext } from "../testing/exec";
import { Workspace } from "../workspace/workspace";
import { fileOps } from "./index";

let base: string;
let dir: string;
let marks: string;
let ws: Workspace;
beforeEach(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "quiver-gitcfg-")));
  dir = join(base, "ws");
  marks = join(base, "marks");
  await mkdir(dir);
  await mkdir(marks);
  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd: dir, env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" } });
  git("init", "-q");
  git("config", "user.name", "Tester");
  git("config", "user.email", "tester@example.com");
  await writeFile(join(dir, "a.txt"), "one\n");
  git("add", "a.txt");
  git("commit", "-q", "-m", "first");
  // The plant: a program for every hook git offers through configuration.
  const program = async (name: string) => {
    const p = join(marks, `${name}.sh`);
    await writeFile(p, `#!/bin/sh\ntouch ${join(marks, name)}.ran\ncat\n`);
    await chmod(p, 0o755);
    return p;
  };
  const hooks = join(dir, ".git", "hooks");
  for (const h of ["pre-commit", "commit-msg", "post-commit", "post-index-change"]) {
    await writeFile(join(hooks, h), `#!/bin/sh\ntouch ${join(marks, h)}.ran\n`);
    await chmod(join(hooks, h), 0o755);
  }
  const config = [
    `[core]\n\tfsmonitor = ${await program("fsmonitor")}\n\tpager = ${await program("pager")}\n\tsshCommand = ${await program("ssh")}\n\thooksPath = ${hooks}`,
    `[diff]\n\texternal = ${await program("external")}`,
    `[diff "evil"]\n\ttextconv = ${await program("textconv")}\n\tcommand = ${await program("diffcommand")}`,
    `[filter "evil"]\n\tclean = ${await program("clean")}\n\tsmudge = ${await program("smudge")}\n\trequired = true`,
    `[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = ${await program("gpg")}`,
    `[credential]\n\thelper = ${await program("credential")}`,
  ].join("\n");
  await appendFile(join(dir, ".git", "config"), `${config}\n`);
  await writeFile(join(dir, ".gitattributes"), "* filter=evil diff=evil\n");
  await writeFile(join(dir, "a.txt"), "two\n");
  await writeFile(join(dir, "b.txt"), "new\n");
  ws = await Workspace.open(dir, { watch: false });
});
afterEach(async () => {
  ws?.dispose();
  await rm(base, { recursive: true, force: true });
});

async function op(name: string, input: unknown) {
  const parse =
    name in PERSON_FILE_OPS ? PERSON_FILE_OPS[name as keyof typeof PERSON_FILE_OPS].parse : fileOps[name].input.parse;
  return fileOps[name].run(parse(input), opContext(ws));
}

const ran = async () => (await readdir(marks)).filter((f) => f.endsWith(".ran")).sort();

it("Changes, git_diff and a file's earlier version run none of a planted repository's programs", async () => {
  const changes = await op("ide_changes", {});
  expect(changes.meta).toMatchObject({ mode: "git" });
  expect((changes.meta as { files: { path: string }[] }).files.map((f) => f.path)).toEqual([
    ".gitattributes",
    "a.txt",
    "b.txt",
  ]);
  const diff = await op("git_diff", { scope: "workspace" });
  expect(diff.output).toContain("+two");
  expect((await op("ide_original", { path: "a.txt" })).output).toBe("one\n");
  expect(await ran()).toEqual([]);
});

it("Commit commits without running hooks, filters, gpg or any other planted program", async () => {
  const r = await op("ide_commit", { message: "second" });
  expect(r, r.output).toMatchObject({ ok: true });
  expect(
    execFileSync("git", ["-c", "core.fsmonitor=false", "cat-file", "blob", "HEAD:a.txt"], { cwd: dir }).toString(),
  ).toBe("two\n");
  expect(await ran()).toEqual([]);
});
