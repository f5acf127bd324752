// Issue 22, item 3: git commands the shell tool runs without a card must not run programs that
// the repository's configuration names. A workspace repository and a folder made a git dir
// (`tools/HEAD` + `tools/config`) are planted with every such program; each read-only git
// line the classifier accepts then runs through a real runner, and none of them may fire.
import { execFileSync, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { spawnRunner, startServer, tempDir, waitFor, type RunnerChild, type TestServer } from "../../testing/runner";
import type { ToolContext } from "../tool";
import { shellTool } from "./shell";
import { neutraliseGit } from "./shell-git";
import { analyseShell } from "../../shell/analyse";

vi.setConfig({ testTimeout: 120_000 });

const input = (command: string) => {
  const r = shellTool.parse({ command });
  if (!r.ok) throw new Error(r.error);
  return r.value;
};
const auto = (command: string) =>
  shellTool.approvalFor(input(command)) === "auto" && shellTool.isReadOnly(input(command));

describe("git the classifier calls read-only", () => {
  it.each([
    "git log --oneline -5",
    "git log -p -3",
    "git show HEAD",
    "git diff --cached",
    "git diff --staged --stat",
    "git ls-files",
    "git ls-files -s",
    "git rev-parse HEAD",
    "git branch -a",
    "git tag -l",
    "git remote -v",
    "git stash list",
    "git config --get user.name",
    "git --no-pager log -1",
    "cd src && git log -1",
    "git describe --always",
  ])("%s runs without a card", (command) => {
    expect(auto(command)).toBe(true);
  });

  it.each([
    // work-tree reads: clean filters the repository names run even with every override
    "git status",
    "git status --short",
    "git diff",
    "git diff --stat",
    "git diff HEAD",
    "git blame a.txt",
    // another repository, work tree or configuration
    "git -C tools status",
    "git -C tools log",
    "git --git-dir=tools log",
    "git --work-tree=. log",
    "git -c core.pager=evil log",
    "git --exec-path=. log",
    "GIT_DIR=tools git log",
    "GIT_CONFIG_GLOBAL=x git log",
    "env GIT_DIR=tools git log",
    // programs by option
    "git log --ext-diff",
    "git show --textconv HEAD",
    "git difftool",
    "git grep -O foo",
    "git grep --open-files-in-pager foo",
    "git describe --dirty",
    "git log --output=x",
    "git cat-file --filters HEAD:a.txt",
    "git ls-files -m",
    "git config -e",
    // parse-options takes any unambiguous prefix of a long option
    "git describe --always --dirt",
    "git describe --brok",
    "git ls-files --oth",
    "git ls-files --modif",
    "git ls-files -k",
    // the work tree, which a planted core.worktree can move out of the workspace
    "git grep -n TODO",
    "git ls-files -o",
    "git ls-files --others --exclude-standard",
    // merge drivers through re-merged diffs, a git started in a submodule, core.alternateRefsCommand
    "git show --remerge-diff HEAD",
    "git log --remerg -1",
    "git log -p --diff-merges=remerge",
    "git show --diff-merges=r HEAD",
    "git log -p --submodule=diff",
    "git show --submodule HEAD",
    "git log --alternate-refs",
    "git shortlog --alternate-refs -s HEAD",
  ])("%s needs a card", (command) => {
    expect(auto(command)).toBe(false);
  });
});

describe("neutraliseGit", () => {
  it("rewrites each git word of the line, and nothing else", () => {
    const line = "cd src && 'git' log -1 | head -3; git -P show HEAD:a.txt";
    const out = neutraliseGit(line, analyseShell(line).commands);
    expect(out).toMatch(
      /^cd src && GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=\/dev\/null .* 'git' --no-pager -c core\.fsmonitor=false .* log --no-ext-diff --no-textconv -1 \| head -3; /,
    );
    expect(out).toMatch(
      /; GIT_CONFIG_NOSYSTEM=1 [^;]* git --no-pager -c core\.fsmonitor=false -c core\.hooksPath=\/dev\/null\/none [^;]* -P show --no-ext-diff --no-textconv HEAD:a\.txt$/,
    );
    expect(neutraliseGit("ls -la", analyseShell("ls -la").commands)).toBe("ls -la");
  });
});

describe("read-only git through a real runner, with planted configuration", () => {
  let server: TestServer;
  let runner: RunnerChild;
  let dir: string;
  let home: string;
  let calls = 0;
  const pwned = async () => (await readdir(dir)).filter((n) => n.startsWith("pwned-")).sort();
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: dir,
      stdio: "pipe",
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: home },
    }).toString();

  beforeAll(async () => {
    dir = await tempDir();
    home = await mkdtemp(join(tmpdir(), "quiver-home-"));
    git("init", "-q");
    await mkdir(join(dir, "src"));
    await writeFile(join(dir, "a.txt"), "hello\n");
    await writeFile(join(dir, "src", "b.ts"), "// TODO\n");
    await writeFile(join(dir, "m.txt"), "base\n");
    git("add", ".");
    const commit = (...args: string[]) => git("-c", "user.email=a@b", "-c", "user.name=a", "commit", ...args);
    commit("-qm", "first");
    // A merge whose re-merge conflicts: a diff of it made by re-merging runs the merge driver.
    git("checkout", "-q", "-b", "side");
    await writeFile(join(dir, "m.txt"), "side\n");
    commit("-qam", "side");
    git("checkout", "-q", "-");
    await writeFile(join(dir, "m.txt"), "main\n");
    commit("-qam", "main");
    try {
      git("-c", "user.email=a@b", "-c", "user.name=a", "merge", "-q", "side");
    } catch {
      /* the conflict, resolved below */
    }
    await writeFile(join(dir, "m.txt"), "done\n");
    git("add", "m.txt");
    commit("-qm", "merge");
    const mark = (what: string) => `touch ${join(dir, `pwned-${what}`)}`;
    // Every program a repository's configuration can name for a read.
    const config: [string, string][] = [
      ["core.fsmonitor", mark("fsmonitor")],
      ["core.pager", `${mark("pager")}; cat`],
      ["pager.log", `${mark("pager-log")}; cat`],
      ["pager.show", `${mark("pager-show")}; cat`],
      ["diff.external", mark("external-diff")],
      ["diff.evil.command", mark("diff-driver")],
      ["diff.evil.textconv", `${mark("textconv")}; cat`],
      ["filter.evil.clean", `${mark("clean")}; cat`],
      ["filter.evil.smudge", `${mark("smudge")}; cat`],
      ["log.showSignature", "true"],
      ["gpg.program", mark("gpg")],
      ["merge.evil.driver", `${mark("merge-driver")}; false`],
      ["log.diffMerges", "remerge"],
      ["core.hooksPath", join(dir, "hooks")],
      ["user.name", "x"],
    ];
    for (const [k, v] of config) git("config", k, v);
    await writeFile(join(dir, ".gitattributes"), "* filter=evil diff=evil merge=evil\n");
    await mkdir(join(dir, "hooks"));
    for (const hook of ["post-index-change", "post-checkout", "pre-commit", "reference-transaction"]) {
      await writeFile(join(dir, "hooks", hook), `#!/bin/sh\n${mark(`hook-${hook}`)}\n`, { mode: 0o755 });
    }
    // A folder made a git dir by two written files, as in the attack.
    await mkdir(join(dir, "tools", "objects"), { recursive: true });
    await mkdir(join(dir, "tools", "refs"), { recursive: true });
    await writeFile(join(dir, "tools", "HEAD"), "ref: refs/heads/main\n");
    await writeFile(
      join(dir, "tools", "config"),
      `[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = ${mark("tools-fsmonitor")}\n\tpager = ${mark("tools-pager")}\n`,
    );
    // Same size, new mtime: git must read the file, through the clean filter, to compare it.
    await new Promise((r) => setTimeout(r, 1100));
    await writeFile(join(dir, "a.txt"), "hellp\n");
    git("add", "src");
    server = await startServer();
    runner = spawnRunner({ url: server.url, workspace: dir, env: { NODE_ENV: "test", HOME: home } });
    await waitFor(() => server.pool.status().some((r) => r.connected), 30_000, "runner to connect");
  });
  afterAll(async () => {
    await runner?.stop();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });

  const context = (): ToolContext => {
    const callId = `g${++calls}`;
    const signal = new AbortController().signal;
    return {
      sessionId: "s1",
      callId,
      signal,
      progress: () => {},
      services: {},
      remote: (i, o = {}) =>
        server.pool.run({
          sessionId: "s1",
          callId,
          op: "shell",
          input: i,
          deadline: Date.now() + (o.timeoutMs ?? 30_000),
          signal,
          onProgress: o.onProgress,
        }),
    };
  };

  it("the plant is live: the same repository runs its programs for a git that is not neutralised", async () => {
    const r = await shellTool.execute(
      input(
        "git status --short; git log -1 -p | cat; git show -m HEAD | cat; git reflog show -p -1 | cat; git -C tools status >/dev/null 2>&1; true",
      ),
      context(),
    );
    expect(r.isError).toBe(false);
    expect(await pwned()).toEqual(
      expect.arrayContaining(["pwned-clean", "pwned-fsmonitor", "pwned-merge-driver", "pwned-textconv"]),
    );
    for (const f of await pwned()) await rm(join(dir, f));
  });

  it("no read-only git line runs a planted program, and each still answers", async () => {
    const lines = [
      "git log --oneline -5",
      "git log -p -3",
      "git show HEAD",
      "git show -m HEAD",
      "git log -m -p -2",
      "git reflog",
      "git reflog show -p -2",
      "git diff --cached",
      "git diff --staged --stat",
      "git ls-files",
      "git ls-files -s",
      "git rev-parse HEAD",
      "git branch -a",
      "git tag -l",
      "git stash list",
      "git config --get user.name",
      "git describe --always",
      "git shortlog -sn HEAD",
      "git show HEAD:a.txt",
      "git cat-file -p HEAD:a.txt",
      "cd tools && git log -1",
      "cd src && git log -1 | head -3",
    ];
    for (const line of lines) {
      expect(auto(line), line).toBe(true);
      const r = await shellTool.execute(input(line), context());
      expect(await pwned(), line).toEqual([]);
      if (!line.startsWith("cd tools")) expect(r.output, line).toMatch(/^Exit code: 0/);
    }
    const log = await shellTool.execute(input("git log --oneline -5"), context());
    expect(log.output).toContain("first");
    const files = await shellTool.execute(input("git ls-files"), context());
    expect(files.output).toContain("src/b.ts");
  });
});

// A read can reach a remote: in a partial clone a missing object is fetched from the promisor
// remote, and that fetch runs what the repository names (its uploadpack, core.sshCommand, an
// `ext::` URL, a credential helper and askpass). A blobless clone is planted with each; the lines
// the classifier calls read-only, run as neutraliseGit rewrites them, must fetch nothing.
describe("read-only git in a partial clone with a planted promisor remote", () => {
  let root: string;
  let http: Server;
  const MISSING = "1111111111111111111111111111111111111111";
  const lines = [
    `git cat-file -p ${MISSING}`,
    "git cat-file -p HEAD:a.txt",
    "git cat-file -s HEAD:a.txt",
    "git show HEAD",
    "git show HEAD:a.txt",
    "git log -p -1",
    "git log --stat -1",
    "git diff --cached --stat",
    "git shortlog -sn HEAD; git show HEAD | head -1",
  ];
  const plants = ["uploadpack", "ssh", "ext", "http"] as const;
  const repo = (plant: string) => join(root, plant);
  const pwned = async () => (await readdir(root)).filter((n) => n.startsWith("pwned-")).sort();
  const clean = async () => {
    for (const f of await pwned()) await rm(join(root, f));
  };
  // No variable of this process may decide what git runs or allows.
  const env = () => {
    const e: NodeJS.ProcessEnv = { ...process.env, HOME: root, GIT_CONFIG_NOSYSTEM: "1" };
    for (const k of Object.keys(e)) if (/^(GIT_|SSH_ASKPASS)/.test(k) && k !== "GIT_CONFIG_NOSYSTEM") delete e[k];
    return e;
  };
  // Async: the HTTP remote answers from this process, which a sync child would block.
  const bash = (cwd: string, script: string) =>
    new Promise<number | null>((done) => {
      const child = spawn("bash", ["-c", script], { cwd, env: env(), stdio: "ignore" });
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      child.on("close", (code) => (clearTimeout(timer), done(code)));
    });
  const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env: env(), stdio: "pipe" });
  const neutralised = (line: string) => neutraliseGit(line, analyseShell(line).commands);

  beforeAll(async () => {
    root = await tempDir("quiver-lazy-");
    http = createServer((_, res) => res.writeHead(401, { "WWW-Authenticate": 'Basic realm="x"' }).end());
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    const port = (http.address() as AddressInfo).port;
    const up = join(root, "upstream");
    await mkdir(up);
    git(up, "init", "-q");
    await writeFile(join(up, "a.txt"), "hello\n");
    git(up, "add", ".");
    git(up, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "first");
    git(up, "config", "uploadpack.allowFilter", "true");
    const mark = (what: string) => `touch ${join(root, `pwned-${what}`)}`;
    const askpass = join(root, "askpass.sh");
    await writeFile(askpass, `#!/bin/sh\n${mark("askpass")}\n`, { mode: 0o755 });
    const remotes: Record<(typeof plants)[number], [string, string][]> = {
      uploadpack: [["remote.origin.uploadpack", `${mark("uploadpack")}; false`]],
      ssh: [
        ["remote.origin.url", "ssh://git@example.invalid/x.git"],
        ["core.sshCommand", `${mark("ssh")}; false`],
      ],
      ext: [
        ["remote.origin.url", `ext::sh -c ${mark("ext").replace(/ /g, "% ")}`],
        ["protocol.ext.allow", "always"],
      ],
      http: [
        ["remote.origin.url", `http://127.0.0.1:${port}/x.git`],
        ["credential.helper", `!${mark("credential")}; false`],
        ["core.askPass", askpass],
        ["protocol.http.allow", "always"],
      ],
    };
    for (const plant of plants) {
      execFileSync("git", ["clone", "-q", "--filter=blob:none", "--no-checkout", `file://${up}`, repo(plant)], {
        env: env(),
        stdio: "pipe",
      });
      for (const [k, v] of remotes[plant]) git(repo(plant), "config", k, v);
    }
  });
  afterAll(async () => {
    http?.close();
    await rm(root, { recursive: true, force: true });
  });

  it("the plant is live: a git that is not neutralised runs each remote's program", async () => {
    for (const line of lines) {
      expect(auto(line), line).toBe(true);
      await bash(repo("uploadpack"), line);
      expect(await pwned(), line).toEqual(["pwned-uploadpack"]);
      await clean();
    }
    for (const plant of ["ssh", "ext"]) {
      await bash(repo(plant), "git show HEAD");
      expect(await pwned(), plant).toEqual([`pwned-${plant}`]);
      await clean();
    }
    await bash(repo("http"), "git show HEAD");
    expect(await pwned()).toEqual(expect.arrayContaining(["pwned-askpass", "pwned-credential"]));
    await clean();
  });

  it("no read-only git line fetches a missing object or runs a remote's program", async () => {
    for (const plant of plants)
      for (const line of lines) {
        await bash(repo(plant), neutralised(line));
        expect(await pwned(), `${plant}: ${line}`).toEqual([]);
      }
    // What needs no missing object still answers.
    expect(await bash(repo("uploadpack"), neutralised("git log --oneline -1 && git ls-files -s"))).toBe(0);
  });
});
