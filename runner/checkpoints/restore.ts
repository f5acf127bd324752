// Restoring the workspace to a snapshot: the files as they are now are snapshotted first (the
// restore's undo), the difference to the target is computed by git, and each differing file is
// written back through the workspace's descriptor (fs-at: no link on the way is followed out,
// no write lands in .git) with its exact bytes and git's mode (0644, 0755, or a link with its
// exact target); files the target lacks are deleted, with the folders they leave empty. The
// person's own edits made through the IDE after the target was taken are left as they are
// unless the caller says otherwise (person-edits.ts).
import { randomBytes } from "node:crypto";
import { renameSync, symlinkSync, unlinkSync } from "node:fs";
import type { CheckpointRestored, CheckpointRestoreInput, RestoreChange } from "../../server/protocol/checkpoint-ops";
import { at } from "../workspace/fs-at";
import { TEMP_MARK } from "../workspace/atomic";
import { rawDiff, type RawEntry } from "./diff";
import { editedSince } from "./person-edits";
import { nulList, type ShadowRepo } from "./shadow";
import { commitTime, commitTree, snapshotTree } from "./snapshot";

export async function restoreTo(
  shadow: ShadowRepo,
  input: CheckpointRestoreInput,
  key: string,
  parent: string | undefined,
): Promise<CheckpointRestored & { paths: string[] }> {
  const now = await snapshotTree(shadow);
  const entries = (await rawDiff(shadow, now.tree, input.to, input.paths)).filter((e) => !e.gitlink);
  const counts = await lineCounts(shadow, now.tree, input.to, input.paths);
  const kept: string[] = [];
  let todo = entries;
  if (input.keepPersonEdits) {
    const edited = editedSince(shadow.dir, await commitTime(shadow, input.to));
    const mine = (p: string) => edited.some((e) => p === e || p.startsWith(`${e}/`));
    kept.push(...entries.filter((e) => mine(e.path)).map((e) => e.path));
    todo = entries.filter((e) => !mine(e.path));
  }
  const changes: RestoreChange[] = todo.map((e) => ({
    path: e.path,
    change: e.status === "A" ? "recreate" : e.status === "D" ? "delete" : "restore",
    ...(counts.get(e.path) ?? { added: 0, removed: 0 }),
  }));
  if (input.dryRun) return { changes, kept, paths: [] };
  const undoCommit = await commitTree(shadow, now.tree, parent, key);
  const failed = await apply(shadow, todo);
  return { changes, kept, undoCommit, paths: todo.map((e) => e.path), ...(failed.length ? { failed } : {}) };
}

/** Lines each file gains and loses going from `from` to `to` (binary files: 0 and 0). */
async function lineCounts(
  shadow: ShadowRepo,
  from: string,
  to: string,
  paths?: string[],
): Promise<Map<string, { added: number; removed: number }>> {
  const out = nulList(
    await shadow.ok([
      "diff-tree",
      "-r",
      "-z",
      "--no-renames",
      "--numstat",
      from,
      to,
      ...(paths?.length ? ["--", ...paths] : []),
    ]),
  );
  const map = new Map<string, { added: number; removed: number }>();
  for (const line of out) {
    const m = /^(\d+|-)\t(\d+|-)\t([\s\S]*)$/.exec(line);
    if (m) map.set(m[3], { added: m[1] === "-" ? 0 : Number(m[1]), removed: m[2] === "-" ? 0 : Number(m[2]) });
  }
  return map;
}

/** Blobs' bytes by id, read in one `cat-file --batch`. */
async function blobs(shadow: ShadowRepo, ids: string[]): Promise<Map<string, Buffer>> {
  const unique = [...new Set(ids)];
  const map = new Map<string, Buffer>();
  if (unique.length === 0) return map;
  const out = await shadow.ok(["cat-file", "--batch"], { input: unique.join("\n") + "\n" });
  let pos = 0;
  while (pos < out.length) {
    const nl = out.indexOf(10, pos);
    const header = out.subarray(pos, nl).toString();
    const m = /^([0-9a-f]{40}) blob (\d+)$/.exec(header);
    if (!m) throw new Error(`unexpected cat-file answer: ${header.slice(0, 100)}`);
    const size = Number(m[2]);
    map.set(m[1], out.subarray(nl + 1, nl + 1 + size));
    pos = nl + 1 + size + 1;
  }
  return map;
}

async function apply(shadow: ShadowRepo, entries: RawEntry[]): Promise<{ path: string; reason: string }[]> {
  const files = shadow.workspace.files;
  const failed: { path: string; reason: string }[] = [];
  const fail = (path: string, err: unknown) => failed.push({ path, reason: (err as Error).message });
  // Deletions first, deepest first: a file the target has where a folder is now comes after its folder empties.
  const deletions = entries
    .filter((e) => e.status === "D" || e.status === "T")
    .sort((a, b) => b.path.length - a.path.length);
  for (const e of deletions) {
    try {
      if (files.lstat(e.path)) files.unlink(e.path);
      if (e.status === "D") removeEmptyParents(shadow, e.path);
    } catch (err) {
      fail(e.path, err);
    }
  }
  const writes = entries.filter((e) => e.status !== "D");
  const data = await blobs(
    shadow,
    writes.map((e) => e.newBlob),
  );
  for (const e of writes) {
    try {
      const bytes = data.get(e.newBlob);
      if (!bytes) throw new Error("its content is missing from the checkpoint");
      const st = files.lstat(e.path)?.stats;
      if (st?.isDirectory()) files.rmdir(e.path);
      if (e.newMode === "120000") writeLink(shadow, e.path, bytes.toString("utf8"));
      else await files.writeFile(e.path, bytes, e.newMode === "100755" ? 0o755 : 0o644);
    } catch (err) {
      fail(e.path, err);
    }
  }
  return failed;
}

/** A link with exactly this target, made under a temporary name and renamed over the path. */
function writeLink(shadow: ShadowRepo, path: string, target: string): void {
  const w = shadow.workspace.files.walk(path, { write: true, create: true });
  try {
    const tmp = `.${w.name.slice(0, 100)}${TEMP_MARK}${randomBytes(6).toString("hex")}.lnk`;
    symlinkSync(target, at(w.dir, tmp));
    try {
      renameSync(at(w.dir, tmp), at(w.dir, w.name));
    } catch (err) {
      unlinkSync(at(w.dir, tmp));
      throw err;
    }
  } finally {
    w.close();
  }
}

/** After a file's removal, the folders above it it leaves empty, as git does. */
function removeEmptyParents(shadow: ShadowRepo, path: string): void {
  let dir = path;
  while (dir.includes("/")) {
    dir = dir.slice(0, dir.lastIndexOf("/"));
    try {
      shadow.workspace.files.rmdir(dir);
    } catch {
      return;
    }
  }
}
