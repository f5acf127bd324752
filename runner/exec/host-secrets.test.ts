// The host's secrets are out of a sandboxed command's and terminal's reach: a real runner whose
// $HOME is a temp folder full of fake credentials (the workspace inside it, as a project in a
// home is), plus a fake file in /root and a fake home under /home, runs commands that try every
// spelling of reading them; what a command needs of the home (git's identity, the login
// profile, a tool on PATH) still works. And which folders hostSecrets masks, from a fake passwd.
import { appendFile, mkdir, mkdtemp, realpath, rename, symlink, writeFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runShell, spawnRunner, startServer, waitFor, TEST_TOKEN } from "../../server/testing/runner";
import { useRunnerPerTest } from "../../server/testing/runner-per-test";
import { fakeHome, plant, runnerInHome } from "../testing/home";
import { hostSecrets, passwdHomes } from "./host-secrets";
import { bwrapArgs, mountArgs, sandboxInfo } from "./sandbox";

const bwrap = sandboxInfo("auto").available;

const t = useRunnerPerTest();

const shell = (command: string) => runShell(t.server!.pool, command);

const SECRETS: Record<string, string> = {
  ".ssh/id_ed25519": "FAKE-SSH-KEY-1",
  ".aws/credentials": "FAKE-AWS-2",
  ".git-credentials": "https://u:FAKE-GITCRED-3@example.com",
  ".netrc": "machine example.com password FAKE-NETRC-4",
  ".npmrc": "//registry.npmjs.org/:_authToken=FAKE-NPM-5",
  ".config/gh/hosts.yml": "oauth_token: FAKE-GH-6",
  ".docker/config.json": '{"auths":{"x":{"auth":"FAKE-DOCKER-7"}}}',
  ".kube/config": "token: FAKE-KUBE-8",
  ".bash_history": "export TOKEN=FAKE-HISTORY-9",
  ".cargo/credentials.toml": "token = FAKE-CARGO-10",
  ".config/git/credentials": "https://u:FAKE-XDG-GITCRED-11@example.com",
};

describe.runIf(bwrap)("the host's secrets, from a sandboxed command and terminal", () => {
  it("no credential of the home, /root, /home or /etc/shadow by any path; git's identity, the profile and PATH tools still work", async () => {
    const tag = randomBytes(6).toString("hex");
    // Outside /tmp, as a real home is: the sandbox's private /tmp would hide it anyway.
    const home = await realpath(await mkdtemp("/var/tmp/quiver-home-"));
    t.dirs.push(home);
    await plant(home, {
      ...SECRETS,
      ".gitconfig": "[user]\n\tname = Fake Person\n",
      ".profile": "export FROM_PROFILE=profile-ran\n",
      ".local/bin/quiver-hello": "#!/bin/sh\necho hello-from-local\n",
      "tools/bin/quiver-tool": "#!/bin/sh\necho hello-from-path\n",
    });
    const workspace = join(home, "project");
    await mkdir(workspace);
    await symlink(join(home, ".ssh/id_ed25519"), join(workspace, "key-link"));
    // The real /root and /home, with fake secrets of their own, removed after.
    const rootFile = `/root/.quiver-test-secret-${tag}`;
    const otherHome = `/home/quiver-test-${tag}`;
    const planted = await writeFile(rootFile, `FAKE-ROOT-${tag}`).then(
      () => true,
      () => false,
    );
    if (planted) t.dirs.push(rootFile);
    await mkdir(otherHome).catch(() => undefined);
    t.dirs.push(otherHome);
    await writeFile(join(otherHome, ".netrc"), `FAKE-OTHER-${tag}`).catch(() => undefined);

    t.server = await startServer();
    t.runner = spawnRunner({
      url: t.server.url,
      workspace,
      env: { NODE_ENV: "test", QUIVER_SANDBOX: "auto", HOME: home, PATH: `${home}/tools/bin:${process.env.PATH}` },
    });
    await waitFor(() => t.server!.pool.status().some((r) => r.connected), 20_000, "runner to connect");

    const reads = [
      ...Object.keys(SECRETS).map((rel) => `${home}/${rel}`),
      "key-link",
      `../.ssh/id_ed25519`,
      `/proc/1/root${home}/.ssh/id_ed25519`,
      `/proc/self/root${home}/.aws/credentials`,
      `/proc/self/cwd/../.npmrc`,
      rootFile,
      `${otherHome}/.netrc`,
    ];
    const probe = [
      ...reads.map((p) => `cat ${p} 2>/dev/null`),
      `echo; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c -e QUIVER_RUNNER -e ${TEST_TOKEN}`,
      "{ wc -c < /etc/shadow; } 2>/dev/null || echo 0",
      "git config user.name",
      'echo "$FROM_PROFILE"',
      // By path: a login profile may set PATH anew (Debian's /etc/profile does for root).
      `${home}/.local/bin/quiver-hello; ${home}/tools/bin/quiver-tool`,
      "echo written > inside.txt && cat inside.txt",
    ].join("; ");
    const r = await shell(probe);
    expect(r.meta).toMatchObject({ sandboxed: true });
    expect(r.output).not.toMatch(/FAKE-/);
    const lines = r.output.trim().split("\n");
    expect(lines.slice(-7)).toEqual([
      "0",
      "0",
      "Fake Person",
      "profile-ran",
      "hello-from-local",
      "hello-from-path",
      "written",
    ]);

    const pty = t.server!.pool.pty.open("s1", { cols: 200, rows: 50 });
    let screen = "";
    pty.onData((d) => (screen += d));
    pty.write(`cat ${reads.join(" ")} 2>/dev/null; git config user.name; echo done-$((6*7))\r`);
    await waitFor(() => screen.includes("done-42"), 15_000, "the terminal's answer");
    expect(screen).not.toMatch(/FAKE-/);
    expect(screen).toContain("Fake Person");
    pty.close();
  }, 60_000);
});

/** Secrets in the home files bound back, each spelling a user writes (all hold FAKE). */
const BOUND_BACK: Record<string, string> = {
  ".profile": [
    "export FROM_PROFILE=profile-ran",
    'export PATH="$HOME/.local/bin:$PATH"',
    'export  GITHUB_TOKEN="FAKE-PROFILE-1"; export AFTER_IT=kept',
    "declare -x OPENAI_API_KEY=FAKE-PROFILE-2",
    "set -a; DB_PASS='FAKE-PROFILE-3' ; set +a",
    "export AWS_SECRET_ACCESS_KEY=\\",
    "FAKE-PROFILE-4",
    "export DATABASE_URL=postgres://app:FAKE-PROFILE-5@db.example/app",
    '. "$HOME/.bashrc"',
    "",
  ].join("\n"),
  ".bashrc": [
    "alias greet='echo hello-alias'",
    "alias deploy='curl -H \"Authorization: Bearer FAKE-BASHRC-1\" https://x'",
    "alias gh2='GH_TOKEN=FAKE-BASHRC-2 gh'",
    "export HUB=ghp_FAKEFAKEFAKEFAKEFAKEFAKEFAKE12",
    "readonly NPM_TOKEN=$(echo FAKE-BASHRC-3)",
    "",
  ].join("\n"),
  ".gitconfig": [
    "[user]",
    "\tname = Fake Person",
    "\temail = fake@example.com",
    '[url "https://x-access:FAKE-GIT-1@github.com/"]',
    "\tinsteadOf = https://github.com/",
    "[http]",
    "\textraheader = AUTHORIZATION: basic FAKE-GIT-2",
    "",
  ].join("\n"),
  ".config/git/config":
    '[url "https://FAKE-GIT-3@gitlab.com/"]\n\tinsteadOf = https://gitlab.com/\n[alias]\n\tst = status\n',
  ".cargo/config.toml": '[registries.x]\nindex = "https://x.example/index"\ntoken = "FAKE-CARGO-1"\n',
  ".nvm/versions/node/v20.0.0/etc/npmrc": "//registry.npmjs.org/:_authToken=FAKE-NPM-1\n_auth=FAKE-NPM-2\n",
  ".nvm/.netrc": "machine example.com password FAKE-NETRC-1",
  ".pyenv/versions/3.12.0/pip.conf": "[global]\nindex-url = https://u:FAKE-PIP-1@pypi.example/simple\n",
};

describe.runIf(bwrap)("secrets inside the home files bound back", () => {
  /** A runner whose $HOME holds `files`, the workspace inside it. */
  async function runnerWithHome(files: Record<string, string>): Promise<string> {
    const home = await fakeHome(t, { ...files, ".local/bin/quiver-tool": "#!/bin/sh\necho hello-from-path\n" });
    await runnerInHome(t, home);
    return home;
  }

  it("are redacted for commands and the terminal; git's identity, the profile's PATH and aliases still work", async () => {
    const home = await runnerWithHome(BOUND_BACK);
    const files = Object.keys(BOUND_BACK).map((rel) => `${home}/${rel}`);
    const r = await shell(
      [
        `cat ${files.join(" ")} 2>/dev/null`,
        'env | grep -e FAKE -e "^HUB="',
        'echo; git config user.name; git config alias.st; echo "$AFTER_IT $FROM_PROFILE"',
        "quiver-tool",
      ].join("; "),
    );
    expect(r.meta).toMatchObject({ sandboxed: true });
    expect(r.output).not.toMatch(/FAKE/);
    expect(r.output).toContain("QUIVER-REDACTED");
    expect(r.output.trim().split("\n").slice(-4)).toEqual([
      "Fake Person",
      "status",
      "kept profile-ran",
      "hello-from-path",
    ]);

    const pty = t.server!.pool.pty.open("s1", { cols: 200, rows: 50 });
    let screen = "";
    pty.onData((d) => (screen += d));
    pty.write(`cat ${files.join(" ")} 2>/dev/null; env | grep F''AKE; greet; echo done-$((6*7))\r`);
    await waitFor(() => screen.includes("done-42"), 15_000, "the terminal's answer");
    expect(screen).not.toMatch(/FAKE/);
    expect(screen).toContain("hello-alias");
    pty.close();
  }, 60_000);

  it("a file that changes while the runner runs, a link to an unrevealed file, a huge file", async () => {
    const home = await runnerWithHome({
      ".bashrc": "export EARLY=seen-early\n",
      ".secrets": "export LINKED_TOKEN=FAKE-LINKED-1\nexport LINKED_OK=seen-linked\n",
      ".bash_logout": `${"# padding\n".repeat(120_000)}export LOGOUT_TOKEN=FAKE-HUGE-1\n`,
      ".config/git/config": "[user]\n\tname = Early Person\n",
    });
    await symlink(join(home, ".secrets"), join(home, ".bash_aliases"));
    // Links to what is masked: read as nothing (an SSH key has no `NAME=`), not as a copy of it.
    await plant(home, { ".ssh/id_ed25519": "FAKE-LINKED-KEY", ".cargo/credentials.toml": "FAKE-LINKED-CARGO" });
    await symlink(join(home, ".cargo/credentials.toml"), join(home, ".bash_login"));
    await symlink("/etc/shadow", join(home, ".inputrc"));
    const read = `cat ${home}/.bashrc ${home}/.bash_aliases ${home}/.config/git/config; wc -c < ${home}/.bash_login 2>&1; head -c 5 ${home}/.inputrc; grep -c padding ${home}/.bash_logout; tail -c 300 ${home}/.bash_logout`;
    const first = await shell(read);
    expect(first.output).toContain("seen-early");
    expect(first.output).toContain("seen-linked");
    expect(first.output).not.toMatch(/FAKE/);
    expect(first.output).not.toMatch(/root:/);
    // Edited in place (same inode, same size class) and then replaced by a new file.
    // Every read until the edit shows, then once more: never the secret in between.
    const readUntil = async (seen: string) => {
      let out = "";
      await waitFor(
        async () => {
          out = (await shell(read)).output;
          expect(out).not.toMatch(/FAKE/);
          return out.includes(seen);
        },
        15_000,
        seen,
      );
      return out;
    };
    // Edited in place (the same inode), then replaced by a new file, then through the link's target.
    await appendFile(join(home, ".bashrc"), "export LATE_TOKEN=FAKE-LATE-1\nexport LATE=seen-late\n");
    await readUntil("seen-late");
    await writeFile(join(home, ".bashrc.new"), "export GH_PAT=FAKE-LATE-2\nexport NEWER=seen-newer\n");
    await rename(join(home, ".bashrc.new"), join(home, ".bashrc"));
    expect(await readUntil("seen-newer")).not.toContain("seen-late");
    await appendFile(join(home, ".secrets"), "SESSION_COOKIE=FAKE-LATE-3 LINKED_AGAIN=seen-again\n");
    await readUntil("seen-again");
    // An editor's save of git's XDG configuration: a new file renamed over it.
    const gitNew = join(home, ".config/git/config.new");
    await writeFile(gitNew, '[url "https://FAKE-LATE-4@x.example/"]\n\tinsteadOf = https://x/\n# seen-git\n');
    await rename(gitNew, join(home, ".config/git/config"));
    await readUntil("seen-git");
  }, 60_000);
});

describe.runIf(bwrap)("descriptors the runner inherited", () => {
  it("do not reach a sandboxed command (an open secret file on fd 3 and 7 of bwrap's starter)", async () => {
    const dir = await realpath(await mkdtemp("/var/tmp/quiver-fd-"));
    t.dirs.push(dir);
    await writeFile(join(dir, "secret"), "FAKE-FD-SECRET");
    const fd = openSync(join(dir, "secret"), "r");
    try {
      const cmd = bwrapArgs(
        sandboxInfo("auto").bwrap!,
        { workspace: dir, cwd: dir, network: false, newSession: true },
        ["sh", "-c", "cat <&3; cat <&7; ls /proc/self/fd | tr '\\n' ' '"],
      );
      const r = spawnSync(cmd.file, cmd.args, {
        stdio: ["ignore", "pipe", "pipe", fd, "ignore", "ignore", "ignore", fd],
      });
      expect(r.stdout.toString()).not.toContain("FAKE-FD-SECRET");
      expect(r.stdout.toString().trim()).toBe("0 1 2 3"); // 3: ls's own listing of the folder
    } finally {
      closeSync(fd);
    }
  });
});

describe("which folders hostSecrets masks", () => {
  it("the homes of passwd's accounts and the runner's; not the system's own folders, nor a service home holding PATH", async () => {
    const base = await realpath(await mkdtemp("/var/tmp/quiver-passwd-"));
    t.dirs.push(base);
    for (const d of ["svc", "tools/bin", "me/.cargo/bin", "me/.ssh", "me/bin"])
      await mkdir(join(base, d), { recursive: true });
    await writeFile(join(base, "me/.gitconfig"), "");
    await writeFile(join(base, "me/.cargo/credentials.toml"), "");
    const passwd = [
      `svc:x:100:100::${base}/svc:/usr/sbin/nologin`,
      `tools:x:101:101::${base}/tools:/bin/sh`,
      "bin:x:2:2:bin:/bin:/usr/sbin/nologin",
      "sshd:x:3:3::/run/sshd:/usr/sbin/nologin",
      "systemd-network:x:4:4::/:/usr/sbin/nologin",
      "nobody:x:65534:65534::/nonexistent:/usr/sbin/nologin",
    ].join("\n");
    expect(passwdHomes(passwd)).toContain("/run/sshd");
    const s = hostSecrets({ home: `${base}/me`, passwd, path: `${base}/tools/bin:${base}/me/bin:/usr/bin` });
    expect(s.hide).toEqual(expect.arrayContaining([`${base}/svc`, `${base}/me`, `${base}/me/.cargo/credentials.toml`]));
    for (const never of ["/", "/bin", "/run/sshd", "/nonexistent", `${base}/tools`])
      expect(s.hide).not.toContain(never);
    // Revealed folders are tmpfs with their entries bound back (home-open.ts); a revealed file is
    // bound as its redacted copy only (home-redact.ts).
    expect(s.hide).toEqual(expect.arrayContaining([`${base}/me/.cargo`, `${base}/me/bin`]));
    expect(s.reveal).toEqual([`${base}/me/.cargo/bin`]);
    expect(s.substitute.map((c) => c.target)).toEqual([`${base}/me/.gitconfig`]);
  });

  it("binds what is revealed after the mask it lies in, around or inside the workspace, and hides a file in it again", () => {
    const around = mountArgs({
      workspace: "/h/me/ws",
      cwd: "/h/me/ws",
      network: false,
      newSession: true,
      hide: ["/h/me"],
      reveal: ["/h/me/.cargo", "/h/me/ws/.bashrc"],
    });
    // (A file hidden inside what is revealed, ~/.cargo/credentials.toml, is the real test's above.)
    expect(around.join(" ")).toBe(
      "--tmpfs /h/me --ro-bind-try /h/me/.cargo /h/me/.cargo --bind /h/me/ws /h/me/ws --remount-ro /h/me",
    );
    const inside = mountArgs({
      workspace: "/h",
      cwd: "/h",
      network: false,
      newSession: true,
      hide: ["/h/me"],
      reveal: ["/h/me/.gitconfig"],
    });
    expect(inside.join(" ")).toBe(
      "--bind /h /h --tmpfs /h/me --ro-bind-try /h/me/.gitconfig /h/me/.gitconfig --remount-ro /h/me",
    );
    // A redacted copy over a file of a mask around or inside the workspace, before it turns read-only.
    const copy = { source: "/run/q/c1", target: "/h/me/.bashrc" };
    const copied = (workspace: string) =>
      mountArgs({ workspace, cwd: workspace, network: false, newSession: true, hide: ["/h/me"], substitute: [copy] });
    expect(copied("/h/ws").join(" ")).toBe(
      "--tmpfs /h/me --ro-bind /run/q/c1 /h/me/.bashrc --bind /h/ws /h/ws --remount-ro /h/me",
    );
    expect(copied("/h").join(" ")).toBe(
      "--bind /h /h --tmpfs /h/me --ro-bind /run/q/c1 /h/me/.bashrc --remount-ro /h/me",
    );
  });
});
