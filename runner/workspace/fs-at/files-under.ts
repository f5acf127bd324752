// The regular files under a folder, visited one by one with bounded memory and time: each
// folder is streamed (opendir) rather than listed whole, and entered through its parent's
// descriptor with O_NOFOLLOW, so a link is never followed and a folder swapped for one meanwhile
// is not entered. The agent decides how wide and deep a tree is, so the walk itself is bounded
// (entries read, folders deep) and says when it stopped short; it yields the event loop in slices.
import { closeSync, constants, type Dir, opendirSync, openSync } from "node:fs";
import { readChild } from "./fd";
import { Slices } from "./slices";
import { at, fdPath } from "./walk";

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

export interface UnderLimits {
  /** Entries read in all (files, folders, links and the rest) before the walk stops. */
  maxEntries: number;
  /** Folders open at once, the top one included: each costs two descriptors. */
  maxDepth: number;
  /** Folders with this name are not entered. */
  skip?: string;
}

/** One regular file: its path below the top folder, and its bytes, up to `max` (null past it,
 *  or when it is no longer a regular file; never through a link, never blocking on a FIFO). */
export type Visit = (path: string, read: (max: number) => Promise<Buffer | null>) => Promise<void>;

interface Level {
  fd: number;
  dir: Dir;
  name: string;
}

/**
 * Calls `visit` on each regular file under the folder `name` in the folder open as `parent`
 * (not followed when it is a link). `complete` is false when a limit left some of it unread (a
 * folder too deep to enter, or entries past `maxEntries`); nothing is visited when `name` is not
 * a folder. Throws when the top folder cannot be read.
 */
export async function eachFileUnder(
  parent: number,
  name: string,
  limits: UnderLimits,
  visit: Visit,
): Promise<{ complete: boolean }> {
  const levels: Level[] = [];
  const slices = new Slices();
  let entries = 0;
  let complete = true;
  try {
    // Before any await: `parent` may be the workspace root's descriptor, closed meanwhile.
    const top = enter(parent, name);
    if (!top) return { complete: true };
    levels.push(top);
    while (levels.length > 0) {
      if (slices.due()) await slices.next();
      const level = levels[levels.length - 1];
      const entry = level.dir.readSync();
      if (!entry) {
        release(levels.pop()!);
        continue;
      }
      if (++entries > limits.maxEntries) return { complete: false };
      if (entry.isDirectory()) {
        if (entry.name === limits.skip) continue;
        if (levels.length >= limits.maxDepth) {
          complete = false;
          continue;
        }
        try {
          const child = enter(level.fd, entry.name);
          if (child) levels.push(child);
        } catch {
          complete = false; // unreadable, or out of descriptors: its files go uncounted
        }
        continue;
      }
      if (!entry.isFile()) continue;
      const path = levels
        .slice(1)
        .map((l) => l.name)
        .concat(entry.name)
        .join("/");
      await visit(path, (max) => readChild(level.fd, entry.name, max));
    }
    return { complete };
  } finally {
    for (const level of levels.reverse()) release(level);
  }
}

/** The folder `name` in `parentFd`, opened without following a link; null when it is not one
 *  now (a link, a file, or gone meanwhile). Throws when it is one that cannot be read. */
function enter(parentFd: number, name: string): Level | null {
  let fd: number;
  try {
    fd = openSync(at(parentFd, name), DIR_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR" || code === "ENOENT") return null;
    throw err;
  }
  try {
    return { fd, dir: opendirSync(fdPath(fd), { bufferSize: 128 }), name };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

function release(level: Level): void {
  try {
    level.dir.closeSync();
  } catch {
    /* Dir closes itself once */
  }
  closeSync(level.fd);
}
