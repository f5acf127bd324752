// Atomic file replacement (temp file in the same directory + rename) and the undo records that
// let a multi-file change or a budget refusal put every file back as it was.
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, mkdir, open, rename, rm, rmdir, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY } = constants;

export const TEMP_MARK = ".quiver-";
const tempName = (abs: string) => join(dirname(abs), `.${basename(abs)}${TEMP_MARK}${randomBytes(6).toString("hex")}.tmp`);

/** Reads a file without following a final symlink; null when it does not exist. */
export async function readNoFollow(abs: string): Promise<{ data: Buffer; mode: number } | null> {
  let fh;
  try {
    fh = await open(abs, O_RDONLY | O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    if ((err as NodeJS.ErrnoException).code === "ELOOP") throw new Error(`${basename(abs)} is a symbolic link; not following it`);
    throw err;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new Error(`${basename(abs)} is not a regular file`);
    return { data: await fh.readFile(), mode: st.mode & 0o7777 };
  } finally {
    await fh.close();
  }
}

/** Writes `data` to a fresh temp file opened with O_EXCL|O_NOFOLLOW, fsyncs it, renames it over `abs`. */
export async function replaceAtomically(abs: string, data: Buffer | string, mode?: number): Promise<void> {
  const tmp = tempName(abs);
  const fh = await open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode ?? 0o644);
  try {
    await fh.writeFile(data);
    if (mode !== undefined) await fh.chmod(mode);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => {});
    await rm(tmp, { force: true });
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, abs);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** What a write changed, enough to undo it. */
export interface Undo {
  abs: string;
  previous: { data: Buffer; mode: number } | null;
  /** Directories the write created, deepest last. */
  createdDirs: string[];
}

/** Applies one change (content, or null to delete) and returns its undo record. */
export async function applyChange(abs: string, content: Buffer | null, previous: Undo["previous"]): Promise<Undo> {
  const undo: Undo = { abs, previous, createdDirs: [] };
  if (content === null) {
    if (previous) await unlink(abs);
    return undo;
  }
  const first = await mkdir(dirname(abs), { recursive: true });
  if (first) {
    for (let d = dirname(abs); d.length >= first.length; d = dirname(d)) undo.createdDirs.unshift(d);
  }
  try {
    await replaceAtomically(abs, content, previous?.mode);
  } catch (err) {
    await removeDirs(undo.createdDirs);
    throw err;
  }
  return undo;
}

/** Puts a file back as it was before applyChange. */
export async function revert(undo: Undo): Promise<void> {
  if (undo.previous) await replaceAtomically(undo.abs, undo.previous.data, undo.previous.mode);
  else if (await lstat(undo.abs).then(() => true, () => false)) await unlink(undo.abs);
  await removeDirs(undo.createdDirs);
}

async function removeDirs(dirs: string[]): Promise<void> {
  // Deepest first; a directory someone else put files into meanwhile stays.
  for (const d of [...dirs].reverse()) {
    try {
      await rmdir(d);
    } catch {
      return;
    }
  }
}
