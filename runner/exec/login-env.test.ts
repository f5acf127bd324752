// The login profile runs once per launcher, not per command: what it exports reaches every
// command, secrets it adds are scrubbed like the runner's own, and its shell bookkeeping stays
// behind. Real bash, real profiles in a temp HOME, with and without bubblewrap.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { scrubEnv } from "./env";
import { parseLoginEnv } from "./login-env";
import { sandboxInfo, type SandboxMode } from "./sandbox";
import { ShellService } from "./shell";
import { opContext, tempWorkspace } from "../testing/exec";

vi.setConfig({ testTimeout: 30_000 });

const modes: SandboxMode[] = sandboxInfo("auto").available ? ["auto", "off"] : ["off"];

describe("parseLoginEnv", () => {
  it("reads what follows the sentinel, drops shell bookkeeping and scrubs what the profile added", () => {
    const out = Buffer.from(
      "welcome from the profile\n\0QUIVER_LOGIN_ENV\0" +
        [
          "A=1",
          "KEEP_TOKEN=t",
          "NEW_TOKEN=x",
          "OK_KEY=y",
          "FROM_PROFILE=p",
          "PWD=/w",
          "SHLVL=1",
          "_=/usr/bin/env",
          "MULTI=a\nb",
          "",
        ].join("\0"),
    );
    const env = parseLoginEnv(out, { A: "1", KEEP_TOKEN: "t" }, ["OK_KEY"]);
    expect(env).toEqual({ A: "1", KEEP_TOKEN: "t", OK_KEY: "y", FROM_PROFILE: "p", MULTI: "a\nb" });
    expect(parseLoginEnv(Buffer.from("A=1\0"), {}, [])).toBeUndefined();
  });
});

describe.each(modes)("login environment (sandbox %s)", (mode) => {
  let ws: Awaited<ReturnType<typeof tempWorkspace>>;
  let home: string;
  let shell: ShellService;
  beforeAll(async () => {
    ws = await tempWorkspace();
    // Inside the workspace: the sandbox has a private /tmp, so a HOME under it would not be seen.
    home = join(ws.dir, "home");
    await mkdir(home);
    // The profile leaves a trace in the workspace (the one writable place) each time it runs.
    await writeFile(
      join(home, ".profile"),
      [
        `echo ran >> ${join(ws.dir, "profile-runs")}`,
        `echo "the profile talks"`,
        `export FROM_PROFILE=profile-value`,
        `export PROFILE_SECRET_TOKEN=leaked`,
        `greet() { echo "hi $1"; }`,
        `export -f greet`,
        `alias ll='ls -l'`,
      ].join("\n"),
    );
    await writeFile(join(home, ".bashrc"), `echo "the bashrc ran"\n`);
  });
  afterAll(() => ws.cleanup());
  afterEach(() => shell?.dispose());

  const run = async (command: string) => (await shell.run({ command }, opContext(ws.workspace))).output;

  it("runs the profile once and hands its exports to every command, secrets scrubbed", async () => {
    shell = new ShellService({
      sandbox: sandboxInfo(mode),
      env: scrubEnv({ ...process.env, HOME: home }),
      allowNetwork: false,
    });
    const first = await run(
      `echo "[$FROM_PROFILE] [$PROFILE_SECRET_TOKEN]"; greet you; shopt -q login_shell && echo login || echo non-login`,
    );
    expect(first).toContain("[profile-value] []");
    expect(first).toContain("hi you");
    expect(first).toContain("non-login");
    expect(first).not.toContain("the profile talks");
    await run("true");
    const last = await run(`echo "$SHLVL $PWD"; env | grep -c QUIVER_LOGIN_ENV || true`);
    expect(last).toContain(`1 ${ws.dir}`);
    expect(last.trim().endsWith("0")).toBe(true);
    const runs = (await readFile(join(ws.dir, "profile-runs"), "utf8")).trim().split("\n");
    expect(runs).toEqual(["ran"]);
  });

  it("never runs ~/.bashrc for a command, even when it looks started by sshd", async () => {
    shell = new ShellService({
      sandbox: sandboxInfo(mode),
      env: scrubEnv({ ...process.env, HOME: home, SSH_CLIENT: "10.0.0.1 50000 22" }),
      allowNetwork: false,
    });
    for (let i = 0; i < 2; i++) expect(await run("echo done")).toBe("done\n");
  });

  it("keeps a profile-set secret the runner allows", async () => {
    shell = new ShellService({
      sandbox: sandboxInfo(mode),
      env: scrubEnv({ ...process.env, HOME: home }),
      envAllow: ["PROFILE_SECRET_TOKEN"],
      allowNetwork: false,
    });
    expect(await run(`echo "[$PROFILE_SECRET_TOKEN]"`)).toContain("[leaked]");
  });
});
