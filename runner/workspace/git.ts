// git as the runner runs it for the Changes panel, git_diff, the diff budget and Commit. The
// runner is not sandboxed, and a repository's configuration can name programs git would run:
// the agent can write `.git/config` with its shell (core.fsmonitor, core.pager, diff.external,
// a filter's clean/smudge/process that `git add` and `git diff HEAD` run, core.sshCommand,
// credential helpers, gpg for signed commits, hooks). Every one of those is turned off on the
// command line, which overrides the repository's own settings, and the system and global
// configuration files are not read at all.
import { execFile } from "node:child_process";

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

const IDENTITY = /^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)$/;

/** What git is given as its environment: nothing that names a program or another config file
 *  (GIT_* dropped, but a commit's identity). */
export function gitEnv(): NodeJS.ProcessEnv {
  const env: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(process.env)) if ((!k.startsWith("GIT_") || IDENTITY.test(k)) && k !== "EDITOR" && k !== "VISUAL" && k !== "PAGER") env[k] = v;
  return { ...env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0", GIT_PAGER: "cat" } as NodeJS.ProcessEnv;
}

/**
 * `-c user.name=… -c user.email=…` from the person's global configuration (~/.gitconfig, read as
 * values only), for whichever of the two the repository does not set itself: with the global
 * file not read, a commit would otherwise not know who is committing.
 */
export async function identityArgs(cwd: string): Promise<string[]> {
  const get = (key: string, global: boolean) =>
    new Promise<string>((resolve) =>
      execFile("git", ["config", ...(global ? ["--global"] : []), "--get", key], { cwd, env: global ? { ...gitEnv(), GIT_CONFIG_GLOBAL: undefined } : gitEnv() }, (err, out) =>
        resolve(err ? "" : String(out).trim()),
      ),
    );
  const args: string[] = [];
  for (const key of ["user.name", "user.email"]) {
    if (await get(key, false)) continue;
    const value = await get(key, true);
    if (value) args.push("-c", `${key}=${value}`);
  }
  return args;
}

export interface GitOut {
  code: number;
  stdout: string;
  stderr: string;
  overflow: boolean;
}

function run<E extends "utf8" | "buffer">(cwd: string, args: string[], encoding: E, maxBuffer: number) {
  const env = gitEnv();
  return new Promise<{ err: (NodeJS.ErrnoException & { code?: number | string }) | null; stdout: E extends "utf8" ? string : Buffer; stderr: string }>((resolve) => {
    execFile("git", args, { cwd, maxBuffer, encoding, env }, (err, stdout, stderr) =>
      resolve({ err: err as never, stdout: stdout as never, stderr: String(stderr) }),
    );
  });
}

/** `-c filter.X.clean= …` for every filter driver the configuration names (each by its own name). */
async function filtersOff(cwd: string): Promise<string[]> {
  const r = await run(cwd, [...SAFE_GIT, "config", "--null", "--name-only", "--get-regexp", "^filter\\."], "utf8", 1024 * 1024);
  const drivers = new Set(r.stdout.split("\0").map((k) => /^filter\.(.+)\.[^.]+$/s.exec(k)?.[1]).filter((d): d is string => !!d));
  return [...drivers].flatMap((d) => ["clean", "smudge", "process"].flatMap((k) => ["-c", `filter.${d}.${k}=`]).concat("-c", `filter.${d}.required=false`));
}

/** git in `cwd` with every configuration-driven program off. */
export async function git(cwd: string, args: string[], maxBuffer = 64 * 1024 * 1024): Promise<GitOut> {
  const { err, stdout, stderr } = await run(cwd, [...SAFE_GIT, ...(await filtersOff(cwd)), ...args], "utf8", maxBuffer);
  if (err && err.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") return { code: 0, stdout, stderr, overflow: true };
  return { code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr, overflow: false };
}

/** A blob's bytes (`HEAD:path`), unfiltered; null when there is none. */
export async function gitBlob(cwd: string, spec: string): Promise<Buffer | null> {
  const { err, stdout } = await run(cwd, [...SAFE_GIT, "cat-file", "blob", spec], "buffer", 64 * 1024 * 1024);
  return err ? null : stdout;
}
