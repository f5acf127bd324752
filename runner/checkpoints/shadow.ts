// The shadow repository of one workspace: a git directory of the runner's own, outside the
// workspace (QUIVER_CHECKPOINT_DIR, default `.quiver/checkpoints` in Quiver's install, which the
// commands' sandbox masks), with its own index, used as `git --git-dir=<shadow> --work-tree=.`.
// The workspace's own .git, index, branches and stash are never read or written by it.
//
// The workspace is the agent's: it can plant .gitattributes, nested repositories, links and huge
// files. Nothing there makes this git run a program: the shadow's configuration is written by
// the runner alone (no filter, textconv or diff drivers, hooks in an empty folder, fsmonitor
// off), system and global configuration are not read, and info/attributes (which outranks every
// .gitattributes) turns off line-ending conversion, filters, ident and working-tree-encoding, so
// what is stored is the file's bytes. git runs like the runner's other helpers: in the commands'
// sandbox with the network off, the shadow folder alone bound writable (helpers.ts).
import { execFile, spawn, type ChildProcessByStdio } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join, resolve } from "node:path";
import type { Readable, Writable } from "node:stream";
import { PROJECT_ROOT } from "../exec/bundle";
import { vanishedCover } from "../exec/host-sockets";
import { RUNNER_NAME_GLOBS } from "../workspace/fs-at/names";
import { SAFE_GIT } from "../workspace/git";
import type { Workspace } from "../workspace/workspace";

/** Where every workspace's shadow repository lives (one folder each, named by a hash of its path). */
export function checkpointRoot(): string {
  return resolve(process.env.QUIVER_CHECKPOINT_DIR || join(PROJECT_ROOT, ".quiver", "checkpoints"));
}

/** The folder of the shadow repository of the workspace at `root`. */
export function shadowDirOf(root: string): string {
  return join(checkpointRoot(), `${createHash("sha256").update(root).digest("hex").slice(0, 32)}.git`);
}

/** checkpointRoot(), made (0700) if missing, for the sandbox to mask. */
export function ensureCheckpointRoot(): string {
  const dir = checkpointRoot();
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    /* unwritable: checkpoints fail later, naming the folder */
  }
  return dir;
}

/** Files larger than this are left out of checkpoints (QUIVER_CHECKPOINT_MAX_FILE_BYTES; default 10 MiB). */
export function maxFileBytes(): number {
  const n = Number(process.env.QUIVER_CHECKPOINT_MAX_FILE_BYTES);
  return Number.isInteger(n) && n > 0 ? n : 10 * 1024 * 1024;
}

const CONFIG = (hooks: string) => `[core]
\trepositoryformatversion = 0
\tbare = false
\tfilemode = true
\tsymlinks = true
\tignorecase = false
\tprecomposeunicode = false
\tautocrlf = false
\tsafecrlf = false
\tfsmonitor = false
\tuntrackedCache = false
\tsplitIndex = false
\thooksPath = ${hooks}
\tattributesFile = /dev/null
\texcludesFile = /dev/null
\tlogAllRefUpdates = false
\tquotePath = false
[gc]
\tauto = 0
[maintenance]
\tauto = false
[diff]
\trenames = false
\tnoprefix = false
\tmnemonicPrefix = false
[commit]
\tgpgSign = false
[submodule]
\trecurse = false
[protocol]
\tallow = never
`;

/** Outranks every .gitattributes in the work tree: bytes in, bytes out, no program named. */
const ATTRIBUTES = "* -text -filter -ident !working-tree-encoding !diff !merge -export-subst\n";

/** The runner's own temps, restore stages and deleted folders are never recorded (fs-at/names.ts). */
const EXCLUDE = RUNNER_NAME_GLOBS.map((glob) => `${glob}\n`).join("");

const GIT_ENV = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_ATTR_NOSYSTEM: "1",
  GIT_TERMINAL_PROMPT: "0",
  GIT_PAGER: "cat",
  GIT_AUTHOR_NAME: "Quiver checkpoint",
  GIT_AUTHOR_EMAIL: "checkpoint@quiver.invalid",
  GIT_COMMITTER_NAME: "Quiver checkpoint",
  GIT_COMMITTER_EMAIL: "checkpoint@quiver.invalid",
};

export interface GitRun {
  code: number;
  stdout: Buffer;
  stderr: string;
}

export class ShadowError extends Error {}

export interface GitOptions {
  /** Run in this folder of the shadow's (its path as the sandbox binds it) instead of the workspace. */
  dir?: string;
  /** false: without --literal-pathspecs. */
  literal?: boolean;
}

/**
 * The most output one git run may hand back in memory (paths, ids, a diff's text). Every
 * restore of every workspace can hold this much at once, so it is kept well under the runner's
 * memory; tests lower it to check that nothing of a file's size comes through it.
 */
export const gitLimits = { maxOutput: 64 * 1024 * 1024 };

export class ShadowRepo {
  private chain: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly workspace: Workspace,
    readonly dir: string,
    private readonly hooks: string,
  ) {}

  /** The shadow repository of `workspace`, made on first use; a lock a killed git left is removed. */
  static open(workspace: Workspace): ShadowRepo {
    const base = checkpointRoot();
    const dir = shadowDirOf(workspace.root);
    if (dir === workspace.root || dir.startsWith(`${workspace.root}/`)) {
      throw new ShadowError(
        `checkpoints are kept in ${base}, which lies inside the workspace; set QUIVER_CHECKPOINT_DIR to a folder outside it`,
      );
    }
    const hooks = join(base, "no-hooks");
    try {
      mkdirSync(hooks, { recursive: true, mode: 0o700 });
      // Every time, not only when HEAD is missing: a first open cut short (the disk full, a kill)
      // once left an empty HEAD, and git then called the folder "not a git repository" for good.
      for (const sub of ["objects", "refs/heads", "refs/quiver", "info"])
        mkdirSync(join(dir, sub), { recursive: true, mode: 0o700 });
      ensureFile(join(dir, "HEAD"), "ref: refs/heads/checkpoints\n");
      ensureFile(join(dir, "description"), `Quiver checkpoints of ${workspace.root}\n`);
    } catch (err) {
      throw shadowFailure(err, dir);
    }
    const shadow = new ShadowRepo(workspace, dir, hooks);
    shadow.settle();
    // Only this process runs git on this shadow (calls are chained below): a lock is a kill's leftover.
    rmSync(join(dir, "index.lock"), { force: true });
    return shadow;
  }

  /**
   * The runner's own settings written again before every operation: whatever was found there (a
   * commands' sandbox that could reach the folder, a person's edit) does not last to the next git.
   */
  private settle(): void {
    try {
      ensureFile(join(this.dir, "config"), CONFIG(this.hooks));
      ensureFile(join(this.dir, "info", "attributes"), ATTRIBUTES);
      ensureFile(join(this.dir, "info", "exclude"), EXCLUDE);
    } catch (err) {
      throw shadowFailure(err, this.dir);
    }
  }

  /** Runs `work` after every earlier operation on this shadow (one index, one writer). */
  serial<T>(work: () => Promise<T>): Promise<T> {
    const run = () => {
      this.settle();
      return work();
    };
    const next = this.chain.then(run, run);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** The command line of one git on the shadow (in the commands' sandbox when there is one). */
  private command(args: string[], opts: GitOptions) {
    const argv = [
      "git",
      ...SAFE_GIT,
      "-c",
      "safe.directory=*",
      // check-ignore refuses pathspec magic, even "literal": its caller prefixes "./" instead.
      ...(opts.literal === false ? [] : ["--literal-pathspecs"]),
      // A scratch work tree of the shadow's own (the ignore rules of a checkpoint, ignore.ts).
      ...(opts.dir ? ["-C", opts.dir] : []),
      `--git-dir=${this.dir}`,
      "--work-tree=.",
      ...args,
    ];
    return this.workspace.helpers.spawn(argv, GIT_ENV, { writable: [this.dir] });
  }

  /** git with its stdout as a stream (blobs of any size go through it a piece at a time, stage.ts). */
  spawn(args: string[], opts: GitOptions = {}): ChildProcessByStdio<Writable, Readable, Readable> {
    const cmd = this.command(args, opts);
    return spawn(cmd.file, cmd.args, { cwd: cmd.cwd, env: cmd.env, stdio: ["pipe", "pipe", "pipe"] });
  }

  /**
   * git on the shadow with the work tree at the workspace root; `input` goes to its stdin. Its
   * output is held in memory, so it is cut (and the run fails) past `maxBuffer`, by default
   * gitLimits.maxOutput: file contents never come this way, only lists of paths and ids.
   */
  async git(args: string[], opts: GitOptions & { input?: Buffer | string; maxBuffer?: number } = {}): Promise<GitRun> {
    const cmd = this.command(args, opts);
    const first = await gitOnce(cmd, opts);
    // Once more with a fresh listing when a host socket vanished as the sandbox started (host-sockets.ts).
    return first.code !== 0 && vanishedCover(first.stderr, cmd.args) ? gitOnce(this.command(args, opts), opts) : first;
  }

  /** git that must succeed: its stdout, or a ShadowError with its stderr. */
  async ok(args: string[], opts: GitOptions & { input?: Buffer | string; maxBuffer?: number } = {}): Promise<Buffer> {
    const r = await this.git(args, opts);
    if (r.code !== 0) {
      const why = `git ${args[0]} failed: ${r.stderr.trim().split("\n").slice(-3).join(" ") || `exit ${r.code}`}`;
      throw new ShadowError(
        /No space left on device|Disk quota exceeded/.test(r.stderr) ? `${diskFull(this.dir)} (${why})` : why,
      );
    }
    return r.stdout;
  }
}

/** One git run as Shadow.git describes it. */
function gitOnce(
  cmd: { file: string; args: string[]; cwd: string; env: NodeJS.ProcessEnv },
  opts: { input?: Buffer | string; maxBuffer?: number },
): Promise<GitRun> {
  const max = opts.maxBuffer ?? gitLimits.maxOutput;
  if (opts.input === undefined) {
    return new Promise((done) =>
      execFile(
        cmd.file,
        cmd.args,
        { cwd: cmd.cwd, env: cmd.env, maxBuffer: max, encoding: "buffer" },
        (err, stdout, stderr) => {
          const code = err
            ? typeof (err as { code?: unknown }).code === "number"
              ? (err as { code: number }).code
              : 1
            : 0;
          done({ code, stdout, stderr: String(stderr) });
        },
      ),
    );
  }
  return new Promise((done) => {
    const child = spawn(cmd.file, cmd.args, { cwd: cmd.cwd, env: cmd.env, stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    child.stdout.on("data", (b: Buffer) => {
      size += b.length;
      if (size <= max) out.push(b);
      else child.kill("SIGKILL");
    });
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.stdin.on("error", () => undefined);
    child.on("error", (e) => done({ code: 1, stdout: Buffer.alloc(0), stderr: e.message }));
    child.on("close", (code) =>
      done({ code: size > max ? 1 : (code ?? 1), stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString() }),
    );
    child.stdin.end(opts.input);
  });
}

const diskFull = (dir: string) => `the disk holding the checkpoints (${dir}) is full (no space left on device)`;

/** An error of the shadow's own files as a ShadowError (a refusal the op reports), the disk full said so. */
function shadowFailure(err: unknown, dir: string): ShadowError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOSPC" || code === "EDQUOT") return new ShadowError(diskFull(dir));
  return new ShadowError(`the checkpoints' folder ${dir} cannot be written: ${(err as Error).message}`);
}

/**
 * `path` holds exactly `data` as a regular file of its own (a link there is replaced, never
 * followed). Written only when it does not, and then as a temp renamed over it: a full disk or
 * a kill midway leaves the old file whole (writeFileSync truncates first, and was cut there).
 */
function ensureFile(path: string, data: string): void {
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      if (fstatSync(fd).isFile() && readFileSync(fd, "utf8") === data) return;
    } finally {
      closeSync(fd);
    }
  } catch {
    /* missing, or a link or something else: written below */
  }
  const tmp = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    writeFileSync(tmp, data, { flag: "wx", mode: 0o644 });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** NUL-separated git output as strings (the last empty piece dropped). */
export function nulList(out: Buffer): string[] {
  const parts = out.toString("utf8").split("\0");
  if (parts.at(-1) === "") parts.pop();
  return parts;
}
