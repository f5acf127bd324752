// rm -r through descriptors, in slices (slices.ts): a folder of 50,000 files takes seconds to
// remove, which one runner's event loop cannot give away at once. Each folder is opened
// O_NOFOLLOW relative to its parent, so a folder swapped for a link meanwhile loses the link,
// never its target; names are unlinked first (most are files) and entered only when they are folders.
// Each level held costs two descriptors, and the agent decides how deep a tree is: a folder past
// MAX_REMOVE_DEPTH is moved up into the top folder being removed (one rename) and removed from
// there on a later pass, so 20,000 levels never take 40,000 of the runner's descriptors.
import { randomBytes } from "node:crypto";
import { closeSync, constants, type Dir, opendirSync, openSync, renameSync, rmdirSync, unlinkSync } from "node:fs";
import { Slices } from "./slices";
import { at, fdPath } from "./walk";

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const code = (err: unknown) => (err as NodeJS.ErrnoException).code;
export const MAX_REMOVE_DEPTH = 128;

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
  /** Folders moved up into the top one since its listing began (which may not show them). */
  let lifted = 0;
  /** Their names: unique in the top folder, whatever it held. */
  const liftTag = randomBytes(6).toString("hex");
  let liftedEver = 0;
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
        if (!unlinkedOrFolder(level.fd, entry.name)) continue;
        if (levels.length >= MAX_REMOVE_DEPTH) {
          renameSync(at(level.fd, entry.name), at(levels[0].fd, `deep-${liftTag}-${liftedEver++}`));
          lifted++;
          continue;
        }
        const child = enter(level.fd, entry.name);
        if (child) levels.push(child);
        continue;
      }
      levels.pop();
      close(level);
      try {
        rmdirSync(at(level.parent, level.name));
      } catch (err) {
        if (levels.length > 0 || lifted === 0 || code(err) !== "ENOTEMPTY") throw err;
        // The top folder again, for what was moved up into it.
        lifted = 0;
        const again = enter(level.parent, level.name);
        if (again) levels.push(again);
      }
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
