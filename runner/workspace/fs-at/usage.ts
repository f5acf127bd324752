// Bytes a folder takes on disk: allocated blocks, links never followed, each hard-linked inode
// once, walked through descriptors (each folder opened O_NOFOLLOW relative to its parent, so a
// folder swapped for a link meanwhile is not entered). One runner serves many workspaces on one
// event loop and a workspace's node_modules alone can hold 300,000 files (seconds of lstat), so
// the walk does its synchronous work in slices of a few milliseconds and yields between them.
// The agent decides the shape of the tree, so a count that only added blocks could be walked
// around: an empty file takes no block but an inode and a folder entry (200,000 counted 0 bytes,
// enough to run a host out of inodes under a 5 GB limit), so every entry counts at least one
// block; and what lies deeper than the walk goes is not counted at all, so such a folder with
// anything in it makes the count `tooDeep`, which the limit takes as reached.
import { closeSync, constants, type Dir, lstatSync, opendirSync, openSync } from "node:fs";
import { Slices } from "./slices";
import { at, fdPath } from "./walk";

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Folders deeper than this are not entered: each level holds two descriptors. */
export const MAX_USAGE_DEPTH = 256;
/** The least an entry counts for: one block, what its inode and folder entry cost in practice. */
export const MIN_ENTRY_BYTES = 4096;

export interface FolderUsage {
  bytes: number;
  /** A folder deeper than MAX_USAGE_DEPTH holds entries that were not counted. */
  tooDeep: boolean;
}

interface Level {
  fd: number;
  dir: Dir;
  /** The walk opened `fd` and closes it; the root's belongs to the caller. */
  owned: boolean;
}

/** Bytes under the folder open as `rootFd` (not closed here), as usageUnder counts them. */
export async function bytesUnder(rootFd: number): Promise<number> {
  return (await usageUnder(rootFd)).bytes;
}

/** What the folder open as `rootFd` (not closed here) takes; yields to the event loop every few ms. */
export async function usageUnder(rootFd: number): Promise<FolderUsage> {
  const seen = new Set<string>();
  const levels: Level[] = [];
  let total = 0;
  let tooDeep = false;
  const slices = new Slices();
  try {
    levels.push({ fd: rootFd, dir: opendirSync(fdPath(rootFd), { bufferSize: 128 }), owned: false });
    while (levels.length > 0) {
      if (slices.due()) await slices.next();
      const level = levels[levels.length - 1];
      const entry = level.dir.readSync();
      if (!entry) {
        levels.pop();
        release(level);
        continue;
      }
      let st;
      try {
        st = lstatSync(at(level.fd, entry.name));
      } catch {
        continue; // gone meanwhile
      }
      if (st.nlink > 1) {
        const key = `${st.dev}:${st.ino}`;
        if (seen.has(key)) continue;
        seen.add(key);
      }
      total += Math.max(st.blocks * 512, MIN_ENTRY_BYTES);
      if (!st.isDirectory()) continue;
      if (levels.length > MAX_USAGE_DEPTH) {
        tooDeep ||= holdsAny(level.fd, entry.name);
        continue;
      }
      const child = enter(level.fd, entry.name);
      if (child) levels.push(child);
    }
    return { bytes: total, tooDeep };
  } finally {
    for (const level of levels.reverse()) release(level);
  }
}

/** The folder `name` in `parentFd`, opened without following a link; null when it is not one now. */
function enter(parentFd: number, name: string): Level | null {
  let fd: number;
  try {
    fd = openSync(at(parentFd, name), DIR_FLAGS);
  } catch {
    return null; // swapped for a link or removed meanwhile: not ours to count
  }
  try {
    return { fd, dir: opendirSync(fdPath(fd), { bufferSize: 128 }), owned: true };
  } catch {
    closeSync(fd);
    return null;
  }
}

/** Whether the folder `name` in `parentFd` has any entry (a link in its place has none). */
function holdsAny(parentFd: number, name: string): boolean {
  const level = enter(parentFd, name);
  if (!level) return false;
  try {
    return level.dir.readSync() !== null;
  } finally {
    release(level);
  }
}

function release(level: Level): void {
  try {
    level.dir.closeSync();
  } catch {
    /* already closed: Dir closes itself once */
  }
  if (level.owned) closeSync(level.fd);
}
