// git as the runner runs it on the workspace: the Changes panel, git_diff, the diff budget,
// Commit, and the workspace half of fetch, pull and push. The agent owns the repository: with its
// shell it writes `.git/config` (filters, textconv, fsmonitor, hooks, `include.path`), the
// attributes that select them (`.gitattributes`, `.git/info/attributes`), and `.git` itself (a
// gitfile or link to another repository, swapped at will while the runner looks).
//
// So nothing here rests on a check of those files. With a sandbox (helpers.ts) every git runs
// in it, never beside it: the workspace is the only folder it can write, whatever `.git` leads
// it to, and it runs under the commands' resource limits. It also runs under a seccomp filter
// that refuses to make a process (runner/exec/seccomp.ts): a program any configuration names,
// under any name a driver can have, fails to start instead of running. Without a sandbox the
// agent's commands run with the runner's own rights, and git does too.
//
// On top of that, so that git behaves the same either way and a required filter does not fail a
// commit, every configured program is turned off on the command line, which overrides the
// repository, and the system and global configuration files are not read.
import { lockedIndex, removeStaleIndexLock } from "./git-lock";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { noForkFilter } from "../exec/seccomp";
import { vanishedCover } from "../exec/host-sockets";
import type { Helpers } from "./helpers";

const OFF = [
  "core.fsmonitor=false",
  "core.hooksPath=/dev/null",
  "core.pager=cat",
  "core.attributesFile=/dev/null",
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
  // A dirty submodule is found by running git in it, a process the seccomp filter refuses.
  "diff.ignoreSubmodules=dirty",
];
export const SAFE_GIT = ["--no-pager", ...OFF.flatMap((c) => ["-c", c])];

/** What git is given besides the basics (helpers.ts): no system or global configuration or
 *  attributes file, no prompts, no pager, no optional locks (a read never rewrites the index). */
const GIT_ENV: Record<string, string> = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_ATTR_NOSYSTEM: "1",
  GIT_OPTIONAL_LOCKS: "0",
  GIT_TERMINAL_PROMPT: "0",
  GIT_PAGER: "cat",
};

/** Long enough for git on a large repository; a git that hangs is then ended. */
const TIMEOUT_MS = 10 * 60 * 1000;

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
  /** The command writes the repository (add, commit, merge, init, config). */
  writes?: boolean;
  /** The command reads or writes work tree files' content (diff against the work tree, add,
   *  commit, checkout): the repository's filters would run on them. */
  worktree?: boolean;
}

interface Raw {
  code: number;
  stdout: Buffer;
  stderr: string;
  overflow: boolean;
}

/**
 * The command line of one git on the workspace: in the helpers' sandbox under the commands'
 * limits, with the seccomp program the caller writes to descriptor 3 (`seccomp`), or directly
 * when there is no sandbox.
 */
export function gitCommand(host: GitHost, args: string[], env: Record<string, string> = {}) {
  const seccomp = host.helpers.sandboxed ? noForkFilter() : undefined;
  const cmd = host.helpers.spawn(
    ["git", ...SAFE_GIT, ...args],
    { ...GIT_ENV, ...env },
    { limited: true, seccompFd: seccomp ? 3 : undefined },
  );
  return { ...cmd, seccomp, fd3: seccomp ? ("pipe" as const) : ("ignore" as const) };
}

/** Gives the seccomp program to bwrap, which reads it before it starts git. */
export function sendSeccomp(child: ChildProcess, seccomp: Buffer | undefined): void {
  if (!seccomp) return;
  const fd = child.stdio[3] as NodeJS.WritableStream;
  fd.on("error", () => undefined);
  fd.end(seccomp);
}

/**
 * One git (after SAFE_GIT) as gitCommand runs it. Output past `maxBuffer` ends it and is cut,
 * with `overflow` set.
 */
export async function runGit(host: GitHost, args: string[], opts: RunGitOptions = {}): Promise<Raw> {
  const first = await runGitOnce(gitCommand(host, args, opts.env), opts);
  // Once more with a fresh listing when a host socket vanished as the sandbox started (host-sockets.ts).
  return first.code !== 0 && first.vanished ? runGitOnce(gitCommand(host, args, opts.env), opts) : first;
}

type RunGitOptions = { maxBuffer?: number; env?: Record<string, string>; stdin?: string | Buffer };

function runGitOnce(cmd: ReturnType<typeof gitCommand>, opts: RunGitOptions): Promise<Raw & { vanished?: boolean }> {
  const max = opts.maxBuffer ?? 64 * 1024 * 1024;
  return new Promise((resolve) => {
    const child = spawn(cmd.file, cmd.args, {
      cwd: cmd.cwd,
      env: cmd.env,
      stdio: [opts.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe", cmd.fd3],
    });
    sendSeccomp(child, cmd.seccomp);
    const out: Buffer[] = [];
    let size = 0;
    let overflow = false;
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
    if (opts.stdin !== undefined) {
      child.stdin!.on("error", () => undefined);
      child.stdin!.end(opts.stdin);
    }
    child.stdout!.on("data", (d: Buffer) => {
      if (overflow) return;
      if (size + d.length > max) {
        out.push(d.subarray(0, max - size));
        overflow = true;
        child.kill("SIGKILL");
        return;
      }
      out.push(d);
      size += d.length;
    });
    child.stderr!.on("data", (d: Buffer) => {
      if (stderr.length < 1024 * 1024) stderr += d.toString();
    });
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ code: 127, stdout: Buffer.alloc(0), stderr: err.message, overflow: false });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      const vanished = code !== 0 && !!vanishedCover(stderr, cmd.args);
      resolve({ code: overflow ? 0 : (code ?? 1), stdout: Buffer.concat(out), stderr, overflow, vanished });
    });
  });
}

/**
 * For a command that writes, with a sandbox: the repository it will write, asked in the sandbox
 * and required to lie inside the workspace, pinned with GIT_DIR and GIT_WORK_TREE (a planted
 * `core.worktree` does not move it). This only says clearly why a repository outside is not
 * written (a workspace in a subfolder, a `.git` leading elsewhere); what stops the write is the
 * sandbox, where everything outside the workspace is read-only, so a `.git` swapped after this
 * check gets nowhere. Null when the workspace is no repository yet (`git init`).
 */
async function pinned(host: GitHost): Promise<Record<string, string> | null | string> {
  const r = await runGit(host, ["rev-parse", "--path-format=absolute", "--absolute-git-dir", "--git-common-dir"], {
    maxBuffer: 64 * 1024,
  });
  if (r.code !== 0) return null;
  const [dir, common] = r.stdout.toString("utf8").split("\n");
  const inside = (p: string | undefined) => !!p && (p === host.root || p.startsWith(`${host.root}/`));
  if (!inside(dir) || !inside(common))
    return `The repository (${!inside(dir) ? dir : common}) lies outside the workspace folder, which is all the runner's git may write: commit from a terminal.`;
  return { GIT_DIR: dir, GIT_WORK_TREE: host.root };
}

/** The `<name>` of every `<section>.<name>.<key>` that `args` (git config …) list. */
async function subsections(host: GitHost, section: string, args: string[], env: Record<string, string>) {
  const r = await runGit(host, ["config", ...args, "--null", "--name-only", "--get-regexp", `^${section}\\.`], {
    maxBuffer: 1024 * 1024,
    env,
  });
  const re = new RegExp(`^${section}\\.(.+)\\.[^.]+$`, "s");
  return new Set(
    r.stdout
      .toString("utf8")
      .split("\0")
      .map((k) => re.exec(k)?.[1])
      .filter((d): d is string => d !== undefined),
  );
}

/**
 * GIT_CONFIG_COUNT/KEY/VALUE that turn off every filter driver the configuration names, each by
 * its own name. Environment, not `-c`: `-c` splits at the first `=`, and a driver's name may hold
 * one (`filter.a=b.clean`), or a dot or quote. The agent can add a driver after this reads the
 * list; the seccomp filter is what keeps such a one from running. Also each submodule's dirty
 * work tree ignored: git would run `git status` in it to find out, a process the filter refuses,
 * and a commit records a submodule's commit, never its uncommitted changes.
 */
export async function filtersOff(host: GitHost, pin: Record<string, string> = {}): Promise<Record<string, string>> {
  const [drivers, modules, modulesFile] = await Promise.all([
    subsections(host, "filter", [], pin),
    subsections(host, "submodule", [], pin),
    subsections(host, "submodule", ["--file", `${host.root}/.gitmodules`], pin),
  ]);
  const set: [string, string][] = [];
  for (const d of drivers) set.push([`filter.${d}.clean`, ""], [`filter.${d}.smudge`, ""], [`filter.${d}.process`, ""]);
  for (const d of drivers) set.push([`filter.${d}.required`, "false"]);
  for (const m of new Set([...modules, ...modulesFile])) set.push([`submodule.${m}.ignore`, "dirty"]);
  const env: Record<string, string> = {};
  set.forEach(([k, v], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = k;
    env[`GIT_CONFIG_VALUE_${i}`] = v;
  });
  if (set.length > 0) env.GIT_CONFIG_COUNT = String(set.length);
  return env;
}

/** git at the workspace root with every configuration-driven program off. */
export async function git(host: GitHost, args: string[], opts: RunOpts = {}): Promise<GitOut> {
  const env: Record<string, string> = {};
  if (opts.writes && host.helpers.sandboxed) {
    const pin = await pinned(host);
    if (typeof pin === "string") return { code: 128, stdout: "", stderr: pin, overflow: false };
    Object.assign(env, pin);
  }
  if (opts.worktree) Object.assign(env, await filtersOff(host, env));
  let r = await runGit(host, [...args], { maxBuffer: opts.maxBuffer, env });
  // A lock left by a git killed with its runner would fail every write from now on (git-lock.ts).
  if (opts.writes && r.code !== 0 && lockedIndex(r.stderr) && (await removeStaleIndexLock(host.root)))
    r = await runGit(host, [...args], { maxBuffer: opts.maxBuffer, env });
  return { code: r.code, stdout: r.stdout.toString("utf8"), stderr: r.stderr, overflow: r.overflow };
}

/** A blob's bytes (`HEAD:path`), unfiltered; null when there is none. */
export async function gitBlob(host: GitHost, spec: string): Promise<Buffer | null> {
  const r = await runGit(host, ["cat-file", "blob", spec]);
  return r.code !== 0 || r.overflow ? null : r.stdout;
}

/**
 * `-c user.name=… -c user.email=…` from the person's global configuration (~/.gitconfig, read as
 * values only), for whichever of the two the repository does not set itself: with the global
 * file not read, a commit would otherwise not know who is committing.
 */
export async function identityArgs(host: GitHost): Promise<string[]> {
  const args: string[] = [];
  for (const key of ["user.name", "user.email"]) {
    if ((await runGit(host, ["config", "--get", key], { maxBuffer: 1024 * 1024 })).stdout.toString().trim()) continue;
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
