// A snapshot of the work tree into the shadow repository: the files git would list (the
// workspace's .gitignore files honoured) that changed since the shadow's index last saw them,
// each checked with lstat through the workspace's descriptor: a regular file over the size cap
// is left out (and taken out of the index if an earlier snapshot had it), a folder git lists on
// its own (a nested repository) is left out, everything else (files, links) is added as it is.
// The index then gives the tree; a commit records it with the runner's clock in its message.
import { maxFileBytes, nulList, type ShadowRepo } from "./shadow";

export interface Snapshot {
  tree: string;
  skipped: { path: string; size: number }[];
}

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
  // git stores nothing beyond a link to a folder (a folder swapped for one reads as deleted).
  const dirs = new Map<string, boolean>();
  const realDir = (dir: string): boolean => {
    if (!dir) return true;
    let ok = dirs.get(dir);
    if (ok === undefined) {
      const parent = dir.includes("/") ? dir.slice(0, dir.lastIndexOf("/")) : "";
      ok = realDir(parent) && lstatOf(shadow, dir)?.isDirectory() === true;
      dirs.set(dir, ok);
    }
    return ok;
  };
  for (const path of new Set(listed)) {
    // A folder git lists by itself holds a repository of its own: its files are not ours to copy.
    if (path.endsWith("/")) continue;
    const st = realDir(path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "")
      ? lstatOf(shadow, path)
      : undefined;
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
  return { tree, skipped };
}

function lstatOf(shadow: ShadowRepo, path: string) {
  try {
    return shadow.workspace.files.lstat(path)?.stats;
  } catch {
    return undefined;
  }
}

/** A commit of `tree` (after `parent`), kept reachable under refs/quiver/<key>. */
export async function commitTree(
  shadow: ShadowRepo,
  tree: string,
  parent: string | undefined,
  key: string,
): Promise<string> {
  const args = ["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", `quiver checkpoint at=${Date.now()}`];
  const commit = (await shadow.ok(args)).toString().trim();
  await shadow.ok(["update-ref", `refs/quiver/${key}`, commit]);
  return commit;
}

/** When the runner made `commit` (ms), from its message; 0 when unknown. */
export async function commitTime(shadow: ShadowRepo, commit: string): Promise<number> {
  const msg = (await shadow.ok(["cat-file", "commit", commit])).toString();
  const body = msg.slice(msg.indexOf("\n\n") + 2);
  return Number(AT.exec(body)?.[1] ?? 0);
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
