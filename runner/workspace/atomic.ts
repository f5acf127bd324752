// A file's change and its undo record, so a multi-file change or a budget refusal can put every
// file back as it was. The bytes move through fs-at/ (atomic temp-and-rename in the parent's
// descriptor); paths are workspace-relative.
import type { WorkspaceFs } from "./fs-at";

export { TEMP_MARK } from "./fs-at";

const MiB = 1024 * 1024;

/**
 * The largest file a change reads whole (for its hash and its undo): above every read cap of the
 * tools and the editor, so no change a tool or a person could have prepared is refused. A larger
 * one (a sparse file of gigabytes costs no disk) would be read into the runner's memory whole.
 */
export const CHANGE_READ_MAX = 64 * MiB;

/** A regular file's bytes without following a last link; null when it does not exist; a file
 *  over CHANGE_READ_MAX throws, unread. */
export async function readNoFollow(files: WorkspaceFs, rel: string): Promise<{ data: Buffer; mode: number } | null> {
  const r = await files.readFile(rel, { follow: false, maxBytes: CHANGE_READ_MAX });
  if (r.kind === "missing") return null;
  if (r.kind === "large")
    throw new Error(
      `${rel} is ${r.size} bytes, more than the file tools change (${CHANGE_READ_MAX / MiB} MiB); change it with a shell command`,
    );
  if (r.kind === "link") throw new Error(`${rel} is a symbolic link; not following it`);
  if (r.kind !== "file") throw new Error(`${rel} is not a regular file`);
  return { data: r.data, mode: r.mode };
}

/** What a write changed, enough to undo it. */
export interface Undo {
  rel: string;
  previous: { data: Buffer; mode: number } | null;
  /** Directories the write created, outermost first. */
  createdDirs: string[];
}

/** Applies one change (content, or null to delete) and returns its undo record. */
export async function applyChange(
  files: WorkspaceFs,
  rel: string,
  content: Buffer | null,
  previous: Undo["previous"],
): Promise<Undo> {
  const undo: Undo = { rel, previous, createdDirs: [] };
  if (content === null) {
    if (previous) files.unlink(rel);
    return undo;
  }
  undo.createdDirs = (await files.writeFile(rel, content, previous?.mode)).created;
  return undo;
}

/** Puts a file back as it was before applyChange. */
export async function revert(files: WorkspaceFs, undo: Undo): Promise<void> {
  if (undo.previous) await files.writeFile(undo.rel, undo.previous.data, undo.previous.mode);
  else if (files.lstat(undo.rel)) files.unlink(undo.rel);
  removeDirs(files, undo.createdDirs);
}

/** Deepest first; a directory someone else put files into meanwhile stays. */
export function removeDirs(files: WorkspaceFs, dirs: string[]): void {
  for (const d of [...dirs].reverse()) {
    try {
      files.rmdir(d);
    } catch {
      return;
    }
  }
}
