// The host's secrets are out of a sandboxed command's and terminal's reach: a real runner whose
// $HOME is a temp folder full of fake credentials (the workspace inside it, as a project in a
// home is), plus a fake file in /root and a fake home under /home, runs commands that try every
// spelling of reading them; what a command needs of the home (git's identity, the login
// profile, a tool on PATH) still works. And which folders hostSecrets masks, from a fake passwd.
import { mkdir, mkdtemp, realpath, symlink, writeFile } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runShell, spawnRunner, startServer, waitFor, TEST_TOKEN } from "../../server/testing/runner";
import { useRunnerPerTest } from "../../server/testing/runner-per-test";
import { hostSecrets, passwdHomes } from "./host-secrets";
import { bwrapArgs, mountArgs, sandboxInfo } from "./sandbox";

const bwrap = sandboxInfo("auto").available;

const t = useRunnerPerTest();

const shell = (command: string) => runShell(t.server!.pool, command);

/** Writes `files` (relative path → content) under `dir`. */
async function plant(dir: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(join(dir, rel, ".."), { recursive: true });
    await writeFile(join(dir, rel), content, { mode: rel.includes("bin/") ? 0o755 : 0o600 });
  }
}

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
    expect(s.reveal.sort()).toEqual([`${base}/me/.cargo`, `${base}/me/.gitconfig`, `${base}/me/bin`]);
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
      "--tmpfs /h/me --ro-bind /h/me/.cargo /h/me/.cargo --bind /h/me/ws /h/me/ws --remount-ro /h/me",
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
      "--bind /h /h --tmpfs /h/me --ro-bind /h/me/.gitconfig /h/me/.gitconfig --remount-ro /h/me",
    );
  });
});
