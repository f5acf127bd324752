// The runner's git with a real sandbox, on repositories the agent planted: a filter driver under a
// name `-c` cannot override (`a=b`, dots, quotes, through include.path), a `.git` leading to a
// repository outside the workspace (gitfile, relative gitdir, link, commondir, core.worktree,
// alternates), and a `.git` swapped back and forth while the person commits. Commit, the Changes
// panel and git_diff must run none of the agent's programs and write nothing outside the workspace.
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PERSON_FILE_OPS } from "../../server/protocol/person-file-ops";
import { helperSandbox, type HelperSandbox } from "../exec/helper-sandbox";
import { DEFAULT_LIMITS } from "../exec/limits";
import { sandboxInfo } from "../exec/sandbox";
import { fileOps } from "../files/index";
import { opContext } from "../testing/exec";
import { runGit } from "./git";
import { Workspace } from "./workspace";

const sandbox = sandboxInfo("auto");
let base: string;
let ws: string;
let outside: string;
let workspace: Workspace;
let helpers: HelperSandbox;

const sh = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" }, stdio: "pipe" }).toString();
const commitAll = (cwd: string, msg: string) =>
  sh(cwd, "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-q", "--allow-empty", "-m", msg);

/** A program that leaves a mark in the workspace (writable in the sandbox) and outside it. */
async function payload(name: string): Promise<string> {
  const p = join(ws, `.payload-${name}.sh`);
  await writeFile(p, `touch ${ws}/.ran-${name} ${base}/ran-${name} 2>/dev/null\ncat\n`);
  return `sh ${p}`;
}
const marks = async () => [
  ...(await readdir(ws)).filter((f) => f.startsWith(".ran-")),
  ...(await readdir(base)).filter((f) => f.startsWith("ran-")),
];

/** What a write into `repo` would change: its refs, index and objects. */
const stateOf = (repo: string) =>
  [
    sh(repo, "for-each-ref"),
    existsSync(join(repo, ".git/index")) ? execFileSync("stat", ["-c", "%Y.%s", join(repo, ".git/index")]) : "",
    execFileSync("find", [join(repo, ".git/objects"), "-type", "f"])
      .toString()
      .split("\n")
      .sort()
      .join(),
  ].join("|");

async function op(name: string, input: unknown) {
  const parse =
    name in PERSON_FILE_OPS ? PERSON_FILE_OPS[name as keyof typeof PERSON_FILE_OPS].parse : fileOps[name].input.parse;
  return fileOps[name].run(parse(input), opContext(workspace));
}

beforeEach(async () => {
  // Not under /tmp: the sandbox has a /tmp of its own, and the outside repository must be visible in it.
  base = await realpath(await mkdtemp(join(existsSync("/var/tmp") ? "/var/tmp" : tmpdir(), "quiver-gitsb-")));
  ws = join(base, "ws");
  outside = join(base, "outside");
  await mkdir(ws);
  await mkdir(outside);
  // A repository outside the workspace the sandbox can read (a ~/.pyenv or /etc checkout).
  sh(outside, "init", "-q");
  await writeFile(join(outside, "README"), "outside\n");
  sh(outside, "add", "README");
  commitAll(outside, "outside first");
  workspace = await Workspace.open(ws, { watch: false });
  helpers = helperSandbox(sandbox, { workspace: workspace.root, hide: [], limits: DEFAULT_LIMITS });
  workspace.helpers.useSandbox(helpers.wrap);
});
afterEach(async () => {
  workspace?.dispose();
  await helpers?.dispose();
  await rm(base, { recursive: true, force: true });
});

/** The agent's own repository in the workspace, its filter driver `driver` on every file. */
async function plantFilter(driver: string, how: "config" | "include" | "process" = "config") {
  sh(ws, "init", "-q");
  await writeFile(join(ws, "a.txt"), "one\n");
  sh(ws, "add", "a.txt");
  commitAll(ws, "first");
  const key = how === "process" ? "process" : "clean";
  const escaped = driver.replace(/\\/g, "\\\\").replace(/"/g, '\\"');
  const section = `[filter "${escaped}"]\n\t${key} = ${await payload("filter")}\n\tsmudge = ${await payload("smudge")}\n\trequired = true\n[diff "${escaped}"]\n\ttextconv = ${await payload("textconv")}\n`;
  if (how === "include") {
    await writeFile(join(ws, "included.cfg"), section);
    await writeFile(
      join(ws, ".git/config"),
      `${await readFile(join(ws, ".git/config"), "utf8")}[include]\n\tpath = ${ws}/included.cfg\n[includeIf "gitdir:${ws}/"]\n\tpath = ${ws}/included.cfg\n`,
    );
  } else await writeFile(join(ws, ".git/config"), `${await readFile(join(ws, ".git/config"), "utf8")}${section}`);
  const attr = driver.includes(" ") || driver.includes('"') ? `"${escaped}"` : driver;
  await writeFile(join(ws, ".git/info/attributes"), `* filter=${attr} diff=${attr}\n`);
  await writeFile(join(ws, "a.txt"), "two\n");
  await writeFile(join(ws, "b.txt"), "new\n");
}

describe.skipIf(!sandbox.available)("the runner's git with a sandbox", () => {
  for (const driver of ["a=b", "a.b", "a=b.clean=x", 'q"uo=te', "sp ace=1"])
    it(`runs no filter named ${JSON.stringify(driver)} on Commit, Changes or git_diff`, async () => {
      await plantFilter(driver);
      expect(sh(ws, "config", "--name-only", "--get-regexp", "^filter")).toContain(driver);
      const changes = await op("ide_changes", {});
      expect((changes.meta as { files: { path: string }[] }).files.map((f) => f.path)).toContain("a.txt");
      expect((await op("git_diff", { scope: "workspace" })).output).toContain("+two");
      const r = await op("ide_commit", { message: "second" });
      expect(r, r.output).toMatchObject({ ok: true });
      expect(sh(ws, "-c", "core.attributesFile=/dev/null", "cat-file", "blob", "HEAD:a.txt")).toBe("two\n");
      expect(await marks()).toEqual([]);
    });

  for (const how of ["include", "process"] as const)
    it(`runs no filter defined through ${how}`, async () => {
      await plantFilter("a=b", how);
      expect((await op("ide_commit", { message: "second" })).ok).toBe(true);
      await op("git_diff", { scope: "workspace" });
      expect(await marks()).toEqual([]);
    });

  it("git under the sandbox cannot start a program even when the names are not turned off", async () => {
    await plantFilter("plain");
    // No filtersOff here: what stops the filter is the seccomp filter, not its name.
    const r = await runGit(workspace, ["add", "-A"]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/cannot fork|Operation not permitted/);
    expect(await marks()).toEqual([]);
  });

  const escapes: [string, () => Promise<void>][] = [
    ["a gitfile", () => writeFile(join(ws, ".git"), `gitdir: ${outside}/.git\n`)],
    ["a relative gitfile", () => writeFile(join(ws, ".git"), "gitdir: ../outside/.git\n")],
    ["a link", () => symlink(join(outside, ".git"), join(ws, ".git"))],
    [
      "a commondir outside",
      async () => {
        await mkdir(join(ws, ".git"));
        await writeFile(join(ws, ".git/HEAD"), "ref: refs/heads/master\n");
        await writeFile(join(ws, ".git/commondir"), `${outside}/.git\n`);
      },
    ],
  ];
  for (const [what, plant] of escapes)
    it(`Commit refuses a repository outside the workspace reached through ${what}, writing nothing there`, async () => {
      const before = stateOf(outside);
      await plant();
      await writeFile(join(ws, "f.txt"), "agent\n");
      const r = await op("ide_commit", { message: "into outside" });
      expect(r.ok).toBe(false);
      expect(stateOf(outside)).toBe(before);
      expect(sh(outside, "log", "--format=%s")).toBe("outside first\n");
    });

  it("a planted core.worktree or alternates outside do not lead Commit out", async () => {
    sh(ws, "init", "-q");
    commitAll(ws, "first");
    sh(ws, "config", "core.worktree", outside);
    await writeFile(join(ws, ".git/objects/info/alternates"), `${outside}/.git/objects\n`);
    await writeFile(join(ws, "mine.txt"), "mine\n");
    const before = stateOf(outside);
    const r = await op("ide_commit", { message: "second" });
    expect(r, r.output).toMatchObject({ ok: true });
    // The work tree committed is the workspace, not the folder core.worktree names.
    expect(sh(ws, "show", "--name-only", "--format=", "HEAD").trim()).toBe("mine.txt");
    expect(stateOf(outside)).toBe(before);
  });

  it("a .git swapped between an outside repository and the agent's own runs no filter and writes nothing outside", async () => {
    sh(ws, "init", "-q", `--separate-git-dir=${ws}/evil.git`, ".");
    commitAll(ws, "first");
    sh(ws, "config", "filter.a=b.clean", await payload("filter"));
    await writeFile(join(ws, "evil.git/info/attributes"), "* filter=a=b\n");
    await writeFile(join(ws, ".gitA"), `gitdir: ${outside}/.git\n`);
    await writeFile(join(ws, ".gitB"), `gitdir: ${ws}/evil.git\n`);
    const before = stateOf(outside);
    // The agent's flipper (its own process, writing only in the workspace), bounded.
    const flip = spawn(
      "sh",
      [
        "-c",
        "for i in $(seq 1 4000); do cp .gitA .g1; mv -f .g1 .git; cp .gitB .g2; mv -f .g2 .git; echo $i > file.txt; done",
      ],
      { cwd: ws, stdio: "ignore" },
    );
    const flipped = new Promise((r) => flip.on("close", r));
    try {
      for (let i = 0; i < 15 && flip.exitCode === null; i++) await op("ide_commit", { message: `c${i}` });
    } finally {
      flip.kill("SIGKILL");
      await flipped;
    }
    expect(await marks()).toEqual([]);
    expect(stateOf(outside)).toBe(before);
  }, 120_000);

  it("limited helpers run under the commands' rlimits and cgroup", async () => {
    const cmd = workspace.helpers.spawn(["sh", "-c", "cat /proc/self/limits /proc/self/cgroup"], {}, { limited: true });
    const out = execFileSync(cmd.file, cmd.args, { cwd: cmd.cwd, env: cmd.env }).toString();
    expect(out).toMatch(new RegExp(`Max cpu time\\s+${DEFAULT_LIMITS.cpuSeconds}\\s`));
    expect(out).toMatch(new RegExp(`Max file size\\s+${DEFAULT_LIMITS.fileBytes}\\s`));
  });
});
