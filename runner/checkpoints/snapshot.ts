// A snapshot of the work tree into the shadow repository: the files git would list (the
// workspace's .gitignore files honoured) that changed since the shadow's index last saw them,
// each checked with lstat through the workspace's descriptor (folder by folder, a few ms at a
// time: listed-stats.ts): a regular file over the size cap is left out (and taken out of the
// index if an earlier snapshot had it), a folder git lists on its own (a nested repository) is
// left out, everything else (files, links) is added as it is.
// The index then gives the tree; a commit records it with the runner's clock in its message,
// and below it what git cannot: the paths the snapshot left out besides ignored files (over the
// cap, nested repositories), which a restore to it must not delete, and permission bits other
// than git's 0644/0755 (a restore's undo records those of the files it is about to change).
import { listedStats } from "./listed-stats";
import { maxFileBytes, nulList, type ShadowRepo } from "./shadow";

export interface Snapshot {
  tree: string;
  skipped: { path: string; size: number }[];
  /** Folders holding a repository of their own (left out), without the trailing slash. */
  nested: string[];
}

/** What a commit's message keeps beside the tree. */
export interface CommitNotes {
  /** Files and folders the snapshot left out for their size or as nested repositories. */
  leftOut: string[];
  /** Permission bits (0o777) of files whose bits are not git's 0644 or 0755. */
  modes: Map<string, number>;
}

/** Notes past this many are not kept (the message stays small; a restore then only has the ignore rules). */
const MAX_NOTES = 20_000;

const AT = /^quiver checkpoint at=(\d+)/;

export async function snapshotTree(shadow: ShadowRepo): Promise<Snapshot> {
  // One pass: -t tags each path ("? " untracked, "C " changed, "R " removed: the last two are tracked).
  const tagged = nulList(
    await shadow.ok(["ls-files", "-z", "-t", "--others", "--modified", "--deleted", "--exclude-standard"]),
  );
  const listed = tagged.map((t) => t.slice(2));
  const tracked = new Set(tagged.filter((t) => !t.startsWith("?")).map((t) => t.slice(2)));
  const cap = maxFileBytes();
  const update: string[] = [];
  const drop: string[] = [];
  const skipped: Snapshot["skipped"] = [];
  const nested: string[] = [];
  const paths: string[] = [];
  for (const path of new Set(listed)) {
    // A folder git lists by itself holds a repository of its own: its files are not ours to copy.
    if (path.endsWith("/")) nested.push(path.slice(0, -1));
    else paths.push(path);
  }
  // Under a link to a folder there is nothing (git stores nothing beyond the link; a folder
  // swapped for one reads as deleted): listedStats finds a path only under real folders.
  const stats = await listedStats(shadow.workspace.files, paths);
  for (const path of paths) {
    const st = stats.get(path);
    if (!st) {
      if (tracked.has(path)) update.push(path);
      continue;
    }
    if (st.isFile() && st.size > cap) {
      skipped.push({ path, size: st.size });
      if (tracked.has(path)) drop.push(path);
      continue;
    }
    if (st.isFile() || st.isSymbolicLink()) update.push(path);
    else if (tracked.has(path)) drop.push(path);
  }
  if (drop.length)
    await shadow.ok(["update-index", "-z", "--force-remove", "--stdin"], { input: drop.join("\0") + "\0" });
  if (update.length)
    await shadow.ok(["update-index", "-z", "--add", "--remove", "--replace", "--stdin"], {
      input: update.join("\0") + "\0",
    });
  const tree = (await shadow.ok(["write-tree"])).toString().trim();
  return { tree, skipped, nested };
}

/** The notes of a snapshot: what it left out. */
export const leftOutOf = (snap: Snapshot): CommitNotes => ({
  leftOut: [...snap.skipped.map((s) => s.path), ...snap.nested],
  modes: new Map(),
});

/** A commit of `tree` (after `parent`), kept reachable under refs/quiver/<key>. */
export async function commitTree(
  shadow: ShadowRepo,
  tree: string,
  parent: string | undefined,
  key: string,
  notes?: CommitNotes,
): Promise<string> {
  const lines = [`quiver checkpoint at=${Date.now()}`, ""];
  for (const p of (notes?.leftOut ?? []).slice(0, MAX_NOTES)) lines.push(`left-out ${JSON.stringify(p)}`);
  for (const [p, m] of [...(notes?.modes ?? [])].slice(0, MAX_NOTES))
    lines.push(`mode ${m.toString(8)} ${JSON.stringify(p)}`);
  // The message on stdin: a long list of notes would not fit in one argument.
  const args = ["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-F", "-"];
  const commit = (await shadow.ok(args, { input: lines.join("\n") + "\n" })).toString().trim();
  await shadow.ok(["update-ref", `refs/quiver/${key}`, commit]);
  return commit;
}

/** The latest commit under refs/quiver/<key> (undefined: none yet). */
export async function keyHead(shadow: ShadowRepo, key: string): Promise<string | undefined> {
  return (
    (await shadow.git(["rev-parse", "-q", "--verify", `refs/quiver/${key}`])).stdout.toString().trim() || undefined
  );
}

/** When the runner made `commit` (ms), from its message; 0 when unknown. */
export async function commitTime(shadow: ShadowRepo, commit: string): Promise<number> {
  const msg = (await shadow.ok(["cat-file", "commit", commit])).toString();
  const body = msg.slice(msg.indexOf("\n\n") + 2);
  return Number(AT.exec(body)?.[1] ?? 0);
}

/** The notes commitTree wrote in `commit`'s message (none in commits made before there were notes). */
export async function commitNotes(shadow: ShadowRepo, commit: string): Promise<CommitNotes> {
  const msg = (await shadow.ok(["cat-file", "commit", commit])).toString();
  const notes: CommitNotes = { leftOut: [], modes: new Map() };
  for (const line of msg.slice(msg.indexOf("\n\n") + 2).split("\n")) {
    try {
      const left = /^left-out (".*")$/.exec(line);
      if (left) notes.leftOut.push(JSON.parse(left[1]) as string);
      const mode = /^mode ([0-7]{1,4}) (".*")$/.exec(line);
      if (mode) notes.modes.set(JSON.parse(mode[2]) as string, parseInt(mode[1], 8) & 0o777);
    } catch {
      /* not a note of ours */
    }
  }
  return notes;
}

/** Whether `commit` is a commit of this shadow (a row can outlive a shadow folder someone removed). */
export async function hasCommit(shadow: ShadowRepo, commit: string): Promise<boolean> {
  return (await shadow.git(["cat-file", "-e", `${commit}^{commit}`])).code === 0;
}

/** Paths that differ between two trees or commits. */
export async function changedPaths(shadow: ShadowRepo, from: string | undefined, to: string): Promise<string[]> {
  if (!from) return nulList(await shadow.ok(["ls-tree", "-r", "-z", "--name-only", to]));
  return nulList(await shadow.ok(["diff-tree", "-r", "-z", "--no-renames", "--name-only", from, to]));
}
