// Clone, fetch, pull and push of a workspace's repository, with the network half in a private
// repository (git-remote.ts) and the workspace half in the commands' sandbox, network off, every
// configured program off (git.ts). Between the two only data passes: ref names and commit ids
// the runner checked, and a pack streamed from the private repository's `pack-objects` into the
// workspace's `index-pack`. The workspace must be the top of its repository (`.git` a folder at
// its root); its remote-tracking refs are written with update-ref, so no FETCH_HEAD, no URL with
// a secret and no credential ever lands in it.
import { spawn } from "node:child_process";
import { lstat, mkdir, readdir, realpath, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { GitCredentialInput, RemoteUrl } from "../../server/protocol/git-remote";
import { git, gitCommand, runGit, sendSeccomp, type GitHost } from "./git";
import { explainNetError, netGit, netSpawn, privateRepo } from "./git-remote";

export class GitRemoteError extends Error {}

export interface SyncOptions {
  remote: RemoteUrl;
  credential?: GitCredentialInput;
  signal: AbortSignal;
  onProgress?(line: string): void;
}

/** Every git on the private repository runs in the workspace's sandbox (git-remote.ts, netSpawn). */
const inSandbox = <T extends SyncOptions>(host: GitHost, opts: T): T & { host: GitHost } => ({ ...opts, host });

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
type Ref = { sha: string; ref: string };

async function must(
  host: GitHost,
  args: string[],
  what: string,
  opts: Parameters<typeof git>[2] = {},
): Promise<string> {
  const r = await git(host, args, opts);
  if (r.code !== 0)
    throw new GitRemoteError(`${what}: ${r.stderr.trim().split("\n").slice(-4).join("\n") || `git exited ${r.code}`}`);
  return r.stdout;
}

function parseRefs(text: string): Ref[] {
  return text
    .split("\n")
    .map((l) => /^([0-9a-f]{40,64}) (refs\/[^\s]+)$/.exec(l))
    .filter((m): m is RegExpExecArray => !!m && SHA.test(m[1]))
    .map((m) => ({ sha: m[1], ref: m[2] }));
}

/** The workspace's `.git`, which must be a real folder at its root (not a link, not a gitdir file). */
export async function workspaceGitDir(host: GitHost): Promise<string> {
  const dir = join(await realpath(host.root), ".git");
  const st = await lstat(dir).catch(() => null);
  if (!st?.isDirectory())
    throw new GitRemoteError(
      "The workspace folder is not the top of a git repository (no .git folder at its root), so it cannot fetch or push.",
    );
  return dir;
}

// git follows alternates five deep: the workspace's objects at the end of five empty ones are
// read, their own `info/alternates` (the agent's to write) never is, whatever it names meanwhile.
const ALTERNATE_DEPTH = 5;

/**
 * Lets the private repository `dir` read the workspace's objects, and nothing else on this
 * machine. The network git runs outside the sandbox: an alternate the agent plants, or a link in
 * the object folder, would lead it to another workspace's or a checkpoint's repository, whose
 * objects a push would then carry to a remote of the agent's choosing. Alternates are cut by
 * depth (race-proof); links are refused here, to say so clearly. A link swapped in after this
 * check resolves in the sandbox every git on the private repository runs in (netSpawn), where
 * other tenants' folders are not: that, not the check, is what stops it.
 */
async function borrowObjects(host: GitHost, dir: string): Promise<void> {
  const objects = join(await workspaceGitDir(host), "objects");
  await refuseForeignObjects(objects);
  let next = objects;
  for (let i = ALTERNATE_DEPTH; i >= 1; i--) {
    const hop = join(dir, "borrowed", String(i));
    await mkdir(join(hop, "info"), { recursive: true });
    await writeFile(join(hop, "info", "alternates"), `${next}\n`);
    next = hop;
  }
  await writeFile(join(dir, "objects", "info", "alternates"), `${next}\n`);
}

async function refuseForeignObjects(objects: string): Promise<void> {
  const refuse = (what: string) => {
    throw new GitRemoteError(
      `The workspace's repository reads objects from outside it (${what}), so it cannot fetch or push: remove that, then try again (git repack -a -d first if it borrows objects from another repository).`,
    );
  };
  const top = await lstat(objects).catch(() => null);
  if (!top?.isDirectory()) refuse(".git/objects is not a folder");
  if (await lstat(join(objects, "info", "alternates")).catch(() => null)) refuse(".git/objects/info/alternates");
  if (await lstat(join(objects, "info", "http-alternates")).catch(() => null))
    refuse(".git/objects/info/http-alternates");
  // Loose objects, packs and info (commit-graphs/ included) lie at most three levels down.
  const walk = async (dir: string, shown: string, depth: number): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.isSymbolicLink()) refuse(`${shown}/${entry.name} is a link`);
      if (entry.isDirectory() && depth < 3) await walk(join(dir, entry.name), `${shown}/${entry.name}`, depth + 1);
    }
  };
  await walk(objects, ".git/objects", 1);
}

async function wsRefs(host: GitHost, patterns: string[]): Promise<Ref[]> {
  return parseRefs(
    await must(
      host,
      ["for-each-ref", "--format=%(objectname) %(refname)", ...patterns],
      "reading the workspace's branches",
    ),
  );
}

/** refs of the private repository `dir`. */
async function netRefs(dir: string, opts: SyncOptions, patterns: string[]): Promise<Ref[]> {
  const r = await netGit(dir, ["for-each-ref", "--format=%(objectname) %(refname)", ...patterns], {
    ...opts,
    credential: undefined,
  });
  return parseRefs(r.stdout);
}

/** Objects reachable from `tips` but not `haves`, from the private repository into the workspace's. */
async function transfer(
  host: GitHost,
  dir: string,
  tips: string[],
  haves: string[],
  signal: AbortSignal,
): Promise<void> {
  if (tips.length === 0) return;
  // In the sandbox too: it reads the workspace's objects through the private repository's alternate.
  const pack = netSpawn(
    dir,
    ["-c", "core.hooksPath=/dev/null", `--git-dir=${dir}`, "pack-objects", "--revs", "--stdout", "-q"],
    { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    { host, signal },
  );
  (pack.stdio[3] as NodeJS.WritableStream).on("error", () => undefined).end();
  const cmd = gitCommand(host, ["index-pack", "--stdin", "--fix-thin"]);
  const index = spawn(cmd.file, cmd.args, {
    cwd: cmd.cwd,
    env: cmd.env,
    stdio: ["pipe", "ignore", "pipe", cmd.fd3],
    signal,
  });
  sendSeccomp(index, cmd.seccomp);
  pack.stdin!.end([...tips, ...haves.map((h) => `^${h}`)].join("\n") + "\n");
  pack.stdout!.pipe(index.stdin!);
  for (const s of [pack.stdin!, index.stdin!]) s.on("error", () => undefined);
  let err = "";
  pack.stderr!.on("data", (d) => (err += d));
  index.stderr!.on("data", (d) => (err += d));
  const done = (c: ReturnType<typeof spawn>) =>
    new Promise<number>((resolve) => (c.on("error", () => resolve(1)), c.on("close", (code) => resolve(code ?? 1))));
  const [a, b] = await Promise.all([done(pack), done(index)]);
  if (a !== 0 || b !== 0)
    throw new GitRemoteError(
      `copying the fetched objects into the workspace failed: ${err.trim().split("\n").slice(-3).join("\n")}`,
    );
}

/** Fetches the remote's branches and tags into a private repository that borrows the workspace's objects. */
async function fetchPrivate(host: GitHost, dir: string, opts: SyncOptions, haves: string[]): Promise<Ref[]> {
  await netGit(dir, ["init", "-q", "--bare", "."], { ...opts, credential: undefined });
  await borrowObjects(host, dir);
  // Only commits the workspace really has become the private repository's "haves" (packed refs).
  const check = await netGit(dir, ["cat-file", "--batch-check=%(objectname) %(objecttype)"], {
    ...opts,
    credential: undefined,
    stdin: haves.join("\n") + "\n",
  });
  const present = [
    ...new Set(
      check.stdout
        .split("\n")
        .map((l) => /^([0-9a-f]+) (commit|tag)$/.exec(l)?.[1])
        .filter((s): s is string => !!s),
    ),
  ];
  await writeFile(
    join(dir, "packed-refs"),
    present.map((s, i) => `${s} refs/quiver-have/${String(i).padStart(6, "0")}\n`).join(""),
  );
  const r = await netGit(
    dir,
    [
      "fetch",
      "--no-tags",
      "--no-write-fetch-head",
      "--progress",
      "--",
      opts.remote.url,
      "+refs/heads/*:refs/remotes/origin/*",
      "+refs/tags/*:refs/tags/*",
    ],
    opts,
  );
  if (r.code !== 0) throw new GitRemoteError(explainNetError(r.stderr, opts.remote, !!opts.credential));
  return netRefs(dir, opts, ["refs/remotes/origin", "refs/tags"]);
}

/** Sets the workspace's refs in one transaction (`update-ref --stdin`). */
async function updateRefs(host: GitHost, lines: string[]): Promise<void> {
  if (lines.length === 0) return;
  const r = await runGit(host, ["update-ref", "-m", "quiver: fetch", "--stdin"], { stdin: lines.join("\n") + "\n" });
  if (r.code !== 0) throw new GitRemoteError(`updating the workspace's branches failed: ${r.stderr.trim()}`);
}

/** Fetch: the remote's branches become `origin/*` in the workspace, its new tags are added. */
export async function fetchRemote(host: GitHost, given: SyncOptions): Promise<{ updated: number }> {
  const opts = inSandbox(host, given);
  await workspaceGitDir(host);
  const mine = await wsRefs(host, ["refs/heads", "refs/remotes", "refs/tags"]);
  const repo = await privateRepo();
  try {
    const theirs = await fetchPrivate(
      host,
      repo.dir,
      opts,
      mine.map((r) => r.sha),
    );
    const have = new Map(mine.map((r) => [r.ref, r.sha]));
    const changed = theirs.filter(
      (r) => have.get(r.ref) !== r.sha && !(r.ref.startsWith("refs/tags/") && have.has(r.ref)),
    );
    await transfer(
      host,
      repo.dir,
      [...new Set(changed.map((r) => r.sha))],
      [...new Set(mine.map((r) => r.sha))],
      opts.signal,
    );
    const gone = mine.filter(
      (r) =>
        r.ref.startsWith("refs/remotes/origin/") &&
        r.ref !== "refs/remotes/origin/HEAD" &&
        !theirs.some((t) => t.ref === r.ref),
    );
    await updateRefs(host, [...changed.map((r) => `update ${r.ref} ${r.sha}`), ...gone.map((r) => `delete ${r.ref}`)]);
    return { updated: changed.length + gone.length };
  } finally {
    await repo.dispose();
  }
}

export async function currentBranch(host: GitHost): Promise<string> {
  const r = await git(host, ["symbolic-ref", "-q", "--short", "HEAD"]);
  const branch = r.stdout.trim();
  if (r.code !== 0 || !branch)
    throw new GitRemoteError("No branch is checked out (HEAD is detached): check one out in the terminal first.");
  return branch;
}

/** Fetch, then fast-forward the checked-out branch to origin's; never merges. */
export async function pullRemote(
  host: GitHost,
  opts: SyncOptions,
): Promise<{ branch: string; from: string; to: string }> {
  const branch = await currentBranch(host);
  await fetchRemote(host, opts);
  const upstream = `refs/remotes/origin/${branch}`;
  const to = (await git(host, ["rev-parse", "-q", "--verify", `${upstream}^{commit}`])).stdout.trim();
  if (!to) throw new GitRemoteError(`The remote has no branch ${branch} to pull from (push it first).`);
  const from = (await git(host, ["rev-parse", "-q", "--verify", "HEAD^{commit}"])).stdout.trim();
  if (from === to) return { branch, from, to };
  const merge = await git(host, ["merge", "--ff-only", "-q", "--no-edit", upstream], { writes: true, worktree: true });
  if (merge.code !== 0) {
    const text = `${merge.stderr}\n${merge.stdout}`;
    if (/would be overwritten/.test(text))
      throw new GitRemoteError(
        `Pull stopped: your uncommitted changes would be overwritten. Commit or discard them first.\n${text
          .trim()
          .split("\n")
          .filter((l) => /^\s+\S/.test(l))
          .join("\n")}`,
      );
    if (/Not possible to fast-forward|fatal: Not possible/i.test(text))
      throw new GitRemoteError(
        `Your branch ${branch} and origin/${branch} have diverged: pull only fast-forwards. Merge or rebase in the terminal (git merge origin/${branch}), resolve any conflicts, commit, then push.`,
      );
    throw new GitRemoteError(`Pull failed: ${text.trim().split("\n").slice(0, 6).join("\n")}`);
  }
  return { branch, from, to };
}

/** The checked-out branch's commit to the same branch on the remote; never forced. */
export async function pushRemote(host: GitHost, given: SyncOptions): Promise<{ branch: string; commit: string }> {
  const opts = inSandbox(host, given);
  await workspaceGitDir(host);
  const branch = await currentBranch(host);
  const commit = (await git(host, ["rev-parse", "-q", "--verify", "HEAD^{commit}"])).stdout.trim();
  if (!SHA.test(commit)) throw new GitRemoteError(`Branch ${branch} has no commit yet: commit something first.`);
  const repo = await privateRepo();
  try {
    await netGit(repo.dir, ["init", "-q", "--bare", "."], { ...opts, credential: undefined });
    await borrowObjects(host, repo.dir);
    const r = await netGit(
      repo.dir,
      ["push", "--porcelain", "--progress", "--", opts.remote.url, `${commit}:refs/heads/${branch}`],
      opts,
    );
    if (r.code !== 0)
      throw new GitRemoteError(explainNetError(`${r.stderr}\n${r.stdout}`, opts.remote, !!opts.credential));
    await updateRefs(host, [`update refs/remotes/origin/${branch} ${commit}`]);
    return { branch, commit };
  } finally {
    await repo.dispose();
  }
}

/** In the workspace from before its `git init` until its files are checked out (cloneRemote). */
export const CLONE_MARK = ".quiver-clone-unfinished";

/** The branch and commit of a finished clone of `url` in the workspace, else undefined. */
async function finishedClone(
  host: GitHost,
  url: string,
): Promise<{ branch: string; commit: string | null } | undefined> {
  if ((await git(host, ["config", "--get", "remote.origin.url"])).stdout.trim() !== url) return undefined;
  const branch = (await git(host, ["symbolic-ref", "-q", "--short", "HEAD"])).stdout.trim();
  const commit = (await git(host, ["rev-parse", "-q", "--verify", "HEAD^{commit}"])).stdout.trim();
  return branch ? { branch, commit: commit || null } : undefined;
}

/** Whether a clone into `root` was cut off: its mark is there, a plain file (never followed). */
async function cloneCutOff(root: string): Promise<boolean> {
  const st = await lstat(join(root, CLONE_MARK)).catch(() => undefined);
  return st?.isFile() ?? false;
}

/**
 * The mark of a clone under way, made new ("wx": O_CREAT|O_EXCL, which follows no link), since a
 * command may have put a link to any file of the runner's under its name during the network
 * clone, and a write by name would have truncated that file with the runner's rights.
 */
async function markClone(root: string): Promise<void> {
  try {
    await writeFile(join(root, CLONE_MARK), "a clone into this workspace has not finished\n", { flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    throw new GitRemoteError(
      `The workspace is not empty: ${CLONE_MARK} was made in it while the repository was being cloned.`,
    );
  }
}

/** Clones into an empty workspace: the remote's default branch (or `branch`) checked out, `origin` set up. */
export async function cloneRemote(
  host: GitHost,
  given: SyncOptions & { branch?: string; making?: boolean },
): Promise<{ branch: string; commit: string | null }> {
  const opts = inSandbox(host, given);
  // A clone cut off (its runner killed) left its marker: what it made so far goes, and it starts
  // over; only while the server is still making the workspace, before anyone could write the mark.
  if (given.making && (await cloneCutOff(host.root)))
    for (const name of await readdir(host.root)) await rm(join(host.root, name), { recursive: true, force: true });
  if ((await readdir(host.root)).length > 0) {
    // A clone that finished when its answer was lost (the server killed meanwhile) is the clone.
    const done = given.making ? await finishedClone(host, opts.remote.url) : undefined;
    if (done) return done;
    throw new GitRemoteError("The workspace is not empty: a repository is cloned only into an empty workspace.");
  }
  const repo = await privateRepo();
  try {
    const bare = join(repo.dir, "r");
    const r = await netGit(
      repo.dir,
      ["clone", "--bare", "--progress", ...(opts.branch ? ["--branch", opts.branch] : []), "--", opts.remote.url, bare],
      opts,
    );
    if (r.code !== 0) {
      if (opts.branch && /Remote branch .* not found/i.test(r.stderr))
        throw new GitRemoteError(`The repository has no branch ${opts.branch}.`);
      throw new GitRemoteError(explainNetError(r.stderr, opts.remote, !!opts.credential));
    }
    const head = (
      await netGit(bare, ["symbolic-ref", "-q", "--short", "HEAD"], { ...opts, credential: undefined })
    ).stdout.trim();
    const branch = opts.branch ?? (head || "main");
    const refs = await netRefs(bare, opts, ["refs/heads", "refs/tags"]);
    await markClone(host.root);
    await must(host, ["init", "-q", "-b", branch], "git init", { writes: true });
    await transfer(host, bare, [...new Set(refs.map((x) => x.sha))], [], opts.signal);
    const tip = refs.find((x) => x.ref === `refs/heads/${branch}`)?.sha ?? null;
    await updateRefs(host, [
      ...refs.map((x) => `create ${x.ref.replace(/^refs\/heads\//, "refs/remotes/origin/")} ${x.sha}`),
      ...(tip ? [`create refs/heads/${branch} ${tip}`] : []),
    ]);
    for (const [k, v] of [
      ["remote.origin.url", opts.remote.url],
      ["remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*"],
      [`branch.${branch}.remote`, "origin"],
      [`branch.${branch}.merge`, `refs/heads/${branch}`],
    ]) {
      await must(host, ["config", k, v], "writing the repository's configuration", { writes: true });
    }
    if (tip)
      await must(host, ["reset", "-q", "--hard", tip], "checking out the files", { writes: true, worktree: true });
    await rm(join(host.root, CLONE_MARK), { force: true });
    return { branch, commit: tip };
  } finally {
    await repo.dispose();
  }
}
