// Restoring the workspace to a snapshot: the files as they are now are snapshotted first (the
// restore's undo), the difference to the target is computed by git, and each differing file is
// written back through the workspace's descriptor (fs-at: no link on the way is followed out,
// no write lands in .git) with its exact bytes and git's exec bit; files the target lacks are
// deleted, with the folders they leave empty, except what the target itself left out (ignored
// by its own .gitignore files, over the size cap, a nested repository: ignore.ts), which a
// restore never deletes. Everything it will write is read out of the shadow into a stage folder
// first (stage.ts), so reading the target cannot fail halfway through; only then is the undo
// committed and the workspace changed, and a file that cannot be changed from there on is
// reported in `failed` with the undo (never a bare refusal the undo is lost with).
// Permission bits: a file that exists keeps its own (only the exec bit follows git); a file
// put back gets the bits the target's notes recorded (a restore's undo records those of every
// file it changes), else 0644 or 0755. The person's own edits made through the IDE after the
// target was taken are left as they are unless the caller says otherwise (person-edits.ts).
// While files change, the restore is recorded outside the workspace (restore-journal.ts): a
// runner killed -9 midway leaves the record, and the next one rolls the restore back (recover.ts).
// The work per file goes a few milliseconds at a time (fs-at/slices.ts), the runner's event
// loop serving its other workspaces in between: a restore of 20,000 files held it for seconds.
import { closeSync, constants, fchmodSync, fstatSync, openSync, renameSync, symlinkSync, unlinkSync } from "node:fs";
import type { Stats } from "node:fs";
import type { CheckpointRestored, CheckpointRestoreInput, RestoreChange } from "../../server/protocol/checkpoint-ops";
import { at } from "../workspace/fs-at";
import { DiskFullError } from "../workspace/fs-at";
import { readUpTo } from "../workspace/fs-at/fd";
import { tempName } from "../workspace/fs-at/names";
import { DiskLimitError } from "../workspace/disk-limit";
import { Slices } from "../workspace/fs-at/slices";
import { rawDiff, type RawEntry } from "./diff";
import { leftOutBy, underAny } from "./ignore";
import { listedStats } from "./listed-stats";
import { editedSince } from "./person-edits";
import { nulList, ShadowError, type ShadowRepo } from "./shadow";
import { commitNotes, commitTime, commitTree, leftOutOf, snapshotTree, type CommitNotes } from "./snapshot";
import { clearRestoreJournal, writeRestoreJournal } from "./restore-journal";
import { stageBlobs, type Staged } from "./stage";

export interface RestoreOptions {
  /** Only entries of exactly these paths, out of the whole diff (a rollback's: more paths than
   *  git's command line may take). */
  only?: ReadonlySet<string>;
  /** false: not recorded (a rollback keeps the record of the restore it undoes until it is done). */
  journal?: boolean;
}

export async function restoreTo(
  shadow: ShadowRepo,
  input: CheckpointRestoreInput,
  key: string,
  parent: string | undefined,
  opts: RestoreOptions = {},
): Promise<CheckpointRestored & { paths: string[] }> {
  const now = await snapshotTree(shadow);
  const all = (await rawDiff(shadow, now.tree, input.to, input.paths)).filter(
    (e) => !e.gitlink && (!opts.only || opts.only.has(e.path)),
  );
  // A file now that the target lacks because the target left it out is not the agent's creation.
  const spared = await leftOutBy(
    shadow,
    input.to,
    all.filter((e) => e.status === "D").map((e) => e.path),
  );
  const entries = all.filter((e) => !spared.has(e.path));
  const counts = await lineCounts(shadow, now.tree, input.to, input.paths);
  const kept: string[] = [];
  let todo = entries;
  if (input.keepPersonEdits) {
    const edited = new Set(editedSince(shadow.dir, await commitTime(shadow, input.to)));
    const mine = (p: string) => underAny(edited, p);
    kept.push(...entries.filter((e) => mine(e.path)).map((e) => e.path));
    todo = entries.filter((e) => !mine(e.path));
  }
  const changes: RestoreChange[] = todo.map((e) => ({
    path: e.path,
    change: e.status === "A" ? "recreate" : e.status === "D" ? "delete" : "restore",
    ...(counts.get(e.path) ?? { added: 0, removed: 0 }),
  }));
  if (input.dryRun) return { changes, kept, paths: [] };
  const target = await commitNotes(shadow, input.to);
  const writes = todo.filter((e) => e.status !== "D");
  // Nothing is changed yet: a failure here (a blob unreadable, the disk full) is a plain refusal.
  const staged = await stageBlobs(shadow, writes).catch((err: Error) => {
    // A full disk is not a read failure: say which (each message says nothing was changed).
    if (err instanceof DiskFullError) throw new ShadowError(err.message);
    if (err instanceof DiskLimitError) throw new ShadowError(`nothing was changed: ${err.message}`);
    throw new ShadowError(`nothing was changed: the restore could not read what it would write: ${err.message}`);
  });
  try {
    const undoCommit = await commitTree(shadow, now.tree, parent, key, await undoNotes(shadow, now, todo));
    // From the first changed file to the last, the server cannot hear of the undo if the runner
    // dies: the record lets the next runner put those files back (a refusal if it cannot be made).
    const root = shadow.workspace.root;
    const recorded = opts.journal !== false && todo.length > 0;
    if (recorded) writeRestoreJournal({ root, key, undo: undoCommit, paths: todo.map((e) => e.path), at: Date.now() });
    let failed: { path: string; reason: string }[];
    try {
      failed = await apply(shadow, todo, staged, target.modes);
    } finally {
      // This process lives on, so the undo reaches the server with the answer: the record must
      // not roll back at a later start what the person has had since.
      if (recorded) clearRestoreJournal(root);
    }
    return { changes, kept, undoCommit, paths: todo.map((e) => e.path), ...(failed.length ? { failed } : {}) };
  } finally {
    await staged.dispose();
  }
}

/**
 * The undo's notes: what `now` left out, and the permission bits of the files about to change
 * (each in `now`, so under real folders: listedStats reads them as the snapshot did).
 */
async function undoNotes(
  shadow: ShadowRepo,
  now: Parameters<typeof leftOutOf>[0],
  todo: RawEntry[],
): Promise<CommitNotes> {
  const notes = leftOutOf(now);
  const changed = todo.filter((e) => e.status !== "A").map((e) => e.path);
  const stats = await listedStats(shadow.workspace.files, changed);
  for (const path of changed) {
    const st = stats.get(path);
    if (!st?.isFile()) continue;
    const bits = st.mode & 0o777;
    if (bits !== 0o644 && bits !== 0o755) notes.modes.set(path, bits);
  }
  return notes;
}

/**
 * The bits a written file gets: those it has (a file being restored), else those the target
 * recorded, else git's; then the exec bit as git has it (x only where r is: never more readable).
 */
export function modeFor(gitMode: string, existing: Stats | undefined, recorded: number | undefined): number {
  const base = existing?.isFile() ? existing.mode & 0o777 : (recorded ?? (gitMode === "100755" ? 0o755 : 0o644));
  if (gitMode !== "100755") return base & ~0o111;
  return base | 0o100 | ((base & 0o044) >> 2);
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

async function apply(
  shadow: ShadowRepo,
  entries: RawEntry[],
  staged: Staged,
  modes: Map<string, number>,
): Promise<{ path: string; reason: string }[]> {
  const files = shadow.workspace.files;
  const failed: { path: string; reason: string }[] = [];
  const fail = (path: string, err: unknown) => failed.push({ path, reason: (err as Error).message });
  // A file at a time, and the event loop's other work between slices of them.
  const slices = new Slices();
  // Deletions first, deepest first: a file the target has where a folder is now comes after its folder empties.
  const deletions = entries
    .filter((e) => e.status === "D" || e.status === "T")
    .sort((a, b) => b.path.length - a.path.length);
  const before = new Map<string, Stats | undefined>();
  /** The folders above deleted files: each tried once, after the last of its files is gone. */
  const above = new Set<string>();
  for (const e of deletions) {
    if (slices.due()) await slices.next();
    try {
      before.set(e.path, files.lstat(e.path)?.stats);
      if (before.get(e.path)) files.unlink(e.path);
      if (e.status === "D")
        for (let dir = parentOf(e.path); dir !== "" && !above.has(dir); dir = parentOf(dir)) above.add(dir);
    } catch (err) {
      fail(e.path, err);
    }
  }
  // The folders the deletions left empty, as git removes them: a longer path first, so a
  // folder's subfolders go before it is tried; one that is not empty stays (and so its parents).
  for (const dir of [...above].sort((a, b) => b.length - a.length)) {
    if (slices.due()) await slices.next();
    try {
      files.rmdir(dir);
    } catch {
      /* not empty, or not ours to remove */
    }
  }
  for (const e of entries.filter((x) => x.status !== "D")) {
    if (slices.due()) await slices.next();
    try {
      const st = files.lstat(e.path)?.stats;
      if (st?.isDirectory()) files.rmdir(e.path);
      if (e.newMode === "120000") {
        const link = staged.link(e.path);
        if (link === undefined) throw new Error("its content is missing from the checkpoint");
        writeLink(shadow, e.path, link);
        continue;
      }
      const name = staged.file(e.path);
      if (name === undefined) throw new Error("its content is missing from the checkpoint");
      await place(shadow, staged, name, e.path, modeFor(e.newMode, st ?? before.get(e.path), modes.get(e.path)));
    } catch (err) {
      fail(e.path, err);
    }
  }
  return failed;
}

/**
 * Moves a staged file into place (its bits set first); across a mount inside the workspace, copies
 * it. The staging folder lies in the workspace, where a command may have swapped the file since it
 * was staged: it is opened without blocking (a FIFO would hold the runner's loop until someone
 * writes to it), without following a link, and used only if it is still a regular file; a copy
 * reads that descriptor, never the name, and no more than the file held when checked.
 */
async function place(shadow: ShadowRepo, staged: Staged, name: string, path: string, mode: number): Promise<void> {
  const files = shadow.workspace.files;
  const fd = openSync(at(staged.dir, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error("its staged copy was replaced while restoring (not a file any more)");
    fchmodSync(fd, mode);
    const w = files.walk(path, { write: true, create: true });
    try {
      renameSync(at(staged.dir, name), at(w.dir, w.name));
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
    } finally {
      w.close();
    }
    // One file at a time: at most one file's bytes are held.
    const { data } = await readUpTo(fd, st.size);
    await files.writeFile(path, data, mode);
  } finally {
    closeSync(fd);
  }
}

/** A link with exactly this target, made under a temporary name and renamed over the path. */
function writeLink(shadow: ShadowRepo, path: string, target: string): void {
  const w = shadow.workspace.files.walk(path, { write: true, create: true });
  try {
    const tmp = tempName(w.name, "lnk");
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

const parentOf = (path: string) => path.slice(0, Math.max(0, path.lastIndexOf("/")));
