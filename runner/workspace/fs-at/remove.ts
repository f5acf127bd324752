// rm -r through descriptors, in slices (slices.ts): a folder of 50,000 files takes seconds to
// remove, which one runner's event loop cannot give away at once. Each folder is opened
// O_NOFOLLOW relative to its parent, so a folder swapped for a link meanwhile loses the link,
// never its target; names are unlinked first (most are files) and entered only when they are folders.
import { closeSync, constants, type Dir, opendirSync, openSync, rmdirSync, unlinkSync } from "node:fs";
import { Slices } from "./slices";
import { at, fdPath } from "./walk";

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

interface Level {
  /** The folder's parent (its descriptor) and its name there, to rmdir it once empty. */
  parent: number;
  name: string;
  fd: number;
  dir: Dir;
}

/**
 * Removes `name` in the folder open as `dir` and everything under it; the first failure stops it
 * and is thrown, as is the signal's abort (checked between slices).
 */
export async function removeEntrySliced(dir: number, name: string, signal?: AbortSignal): Promise<void> {
  const slices = new Slices();
  const levels: Level[] = [];
  signal?.throwIfAborted();
  try {
    const top = unlinkedOrFolder(dir, name) && enter(dir, name);
    if (top) levels.push(top);
    while (levels.length > 0) {
      if (slices.due()) {
        await slices.next();
        signal?.throwIfAborted();
      }
      const level = levels[levels.length - 1];
      const entry = level.dir.readSync();
      if (entry) {
        const child = unlinkedOrFolder(level.fd, entry.name) && enter(level.fd, entry.name);
        if (child) levels.push(child);
        continue;
      }
      levels.pop();
      close(level);
      rmdirSync(at(level.parent, level.name));
    }
  } finally {
    for (const level of levels.reverse()) close(level);
  }
}

/** Unlinks `name` when it is not a folder (a link is removed itself); true when it is one, to enter. */
function unlinkedOrFolder(dir: number, name: string): boolean {
  try {
    unlinkSync(at(dir, name));
    return false;
  } catch (err) {
    if (code(err) === "EISDIR" || code(err) === "EPERM") return true;
    if (code(err) === "ENOENT") return false;
    throw err;
  }
}

/** The folder `name` in `parent`, opened to empty it; null when it was swapped for a file or link (then unlinked) or is gone. */
function enter(parent: number, name: string): Level | null {
  let fd: number;
  try {
    fd = openSync(at(parent, name), DIR_FLAGS);
  } catch (err) {
    if (code(err) === "ENOENT") return null;
    if (code(err) !== "ENOTDIR" && code(err) !== "ELOOP") throw err;
    unlinkSync(at(parent, name));
    return null;
  }
  try {
    return { parent, name, fd, dir: opendirSync(fdPath(fd), { bufferSize: 128 }) };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

function close(level: Level): void {
  try {
    level.dir.closeSync();
  } catch {
    /* Dir closes itself once */
  }
  closeSync(level.fd);
}
