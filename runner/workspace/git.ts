// git as the runner runs it for the Changes panel, git_diff, the diff budget and Commit: in the
// commands' sandbox when there is one (helpers.ts), else as the runner itself. A repository's
// configuration can name programs git would run: the agent can write `.git/config` with its shell (core.fsmonitor, core.pager, diff.external,
// a filter's clean/smudge/process that `git add` and `git diff HEAD` run, core.sshCommand,
// credential helpers, gpg for signed commits, hooks). Every one of those is turned off on the
// command line, which overrides the repository's own settings, and the system and global
// configuration files are not read at all.
import { execFile } from "node:child_process";
import type { Helpers } from "./helpers";

const OFF = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "core.pager=cat",
  "diff.external=",
  "core.sshCommand=",
  "core.askPass=",
  "credential.helper=",
  "commit.gpgSign=false",
  "gpg.program=false",
  "core.editor=false",
  "sequence.editor=false",
  "gc.auto=0",
  "maintenance.auto=false",
  "core.quotepath=false",
];
export const SAFE_GIT = ["--no-pager", ...OFF.flatMap((c) => ["-c", c])];

/** What git is given besides the basics (helpers.ts): no system or global configuration file, no
 *  prompts, no pager, no optional locks (a read never rewrites the index). */
const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_OPTIONAL_LOCKS: "0",
  GIT_TERMINAL_PROMPT: "0",
  GIT_PAGER: "cat",
};

/** Where git runs: the workspace's helper launcher (sandboxed when commands are). */
export interface GitHost {
  root: string;
  helpers: Helpers;
}

export interface GitOut {
  code: number;
  stdout: string;
  stderr: string;
  overflow: boolean;
}

interface RunOpts {
  maxBuffer?: number;
  /** The command writes the repository (add, commit). */
  writes?: boolean;
  /** The command reads work tree files' content (diff against the work tree, add, commit with
   *  paths): the repository's filters would run on them, so each is turned off by name. */
  worktree?: boolean;
  /** Only the exit status is used, nothing it prints: it runs without starting a sandbox. */
  statusOnly?: boolean;
}

function run<E extends "utf8" | "buffer">(
  host: GitHost,
  args: string[],
  encoding: E,
  maxBuffer: number,
  unsandboxed = false,
) {
  const cmd = host.helpers.spawn(["git", ...args], GIT_ENV, { unsandboxed });
  return new Promise<{
    err: (NodeJS.ErrnoException & { code?: number | string }) | null;
    stdout: E extends "utf8" ? string : Buffer;
    stderr: string;
  }>((resolve) => {
    execFile(cmd.file, cmd.args, { cwd: cmd.cwd, env: cmd.env, maxBuffer, encoding }, (err, stdout, stderr) =>
      resolve({ err: err as never, stdout: stdout as never, stderr: String(stderr) }),
    );
  });
}

/**
 * A command that writes the repository runs sandboxed only when the repository is inside the
 * workspace: the sandbox would not let it write one outside (a workspace in a subfolder of a
 * repository). Such a one runs directly, its configured programs still all off.
 */
async function outsideRepo(host: GitHost): Promise<boolean> {
  if (!host.helpers.sandboxed) return false;
  const dir = (await run(host, [...SAFE_GIT, "rev-parse", "--absolute-git-dir"], "utf8", 1024 * 1024)).stdout.trim();
  return !!dir && dir !== host.root && !dir.startsWith(`${host.root}/`);
}

/**
 * `-c filter.X.clean= …` for every filter driver the configuration names (each by its own name).
 * Run without starting a sandbox: what it prints only names what to turn off, and is shown to no one.
 */
async function filtersOff(host: GitHost): Promise<string[]> {
  const r = await run(
    host,
    [...SAFE_GIT, "config", "--null", "--name-only", "--get-regexp", "^filter\\."],
    "utf8",
    1024 * 1024,
    true,
  );
  const drivers = new Set(
    r.stdout
      .split("\0")
      .map((k) => /^filter\.(.+)\.[^.]+$/s.exec(k)?.[1])
      .filter((d): d is string => !!d),
  );
  return [...drivers].flatMap((d) =>
    ["clean", "smudge", "process"]
      .flatMap((k) => ["-c", `filter.${d}.${k}=`])
      .concat("-c", `filter.${d}.required=false`),
  );
}

/** git at the workspace root with every configuration-driven program off. */
export async function git(host: GitHost, args: string[], opts: RunOpts = {}): Promise<GitOut> {
  const unsandboxed = opts.statusOnly || (opts.writes ? await outsideRepo(host) : false);
  const full = [...SAFE_GIT, ...(opts.worktree ? await filtersOff(host) : []), ...args];
  const { err, stdout, stderr } = await run(host, full, "utf8", opts.maxBuffer ?? 64 * 1024 * 1024, unsandboxed);
  if (err && err.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") return { code: 0, stdout, stderr, overflow: true };
  return { code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr, overflow: false };
}

/** A blob's bytes (`HEAD:path`), unfiltered; null when there is none. */
export async function gitBlob(host: GitHost, spec: string): Promise<Buffer | null> {
  const { err, stdout } = await run(host, [...SAFE_GIT, "cat-file", "blob", spec], "buffer", 64 * 1024 * 1024);
  return err ? null : stdout;
}

/**
 * `-c user.name=… -c user.email=…` from the person's global configuration (~/.gitconfig, read as
 * values only), for whichever of the two the repository does not set itself: with the global
 * file not read, a commit would otherwise not know who is committing.
 */
export async function identityArgs(host: GitHost): Promise<string[]> {
  const args: string[] = [];
  for (const key of ["user.name", "user.email"]) {
    if ((await run(host, [...SAFE_GIT, "config", "--get", key], "utf8", 1024 * 1024)).stdout.trim()) continue;
    const value = await globalValue(key);
    if (value) args.push("-c", `${key}=${value}`);
  }
  return args;
}

function globalValue(key: string): Promise<string> {
  return new Promise((resolve) =>
    execFile(
      "git",
      ["config", "--global", "--get", key],
      { cwd: "/", env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: undefined } },
      (err, out) => resolve(err ? "" : String(out).trim()),
    ),
  );
}
