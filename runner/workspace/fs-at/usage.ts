// Bytes a folder takes on disk: allocated blocks, links never followed, each hard-linked inode
// once, walked through descriptors (each folder opened O_NOFOLLOW relative to its parent, so a
// folder swapped for a link meanwhile is not entered). One runner serves many workspaces on one
// event loop and a workspace's node_modules alone can hold 300,000 files (seconds of lstat), so
// the walk does its synchronous work in slices of a few milliseconds and yields between them.
import { closeSync, constants, type Dir, lstatSync, opendirSync, openSync } from "node:fs";
import { Slices } from "./slices";
import { at, fdPath } from "./walk";

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Folders deeper than this are counted as themselves only: each level holds two descriptors. */
export const MAX_USAGE_DEPTH = 256;

interface Level {
  fd: number;
  dir: Dir;
  /** The walk opened `fd` and closes it; the root's belongs to the caller. */
  owned: boolean;
}

/** Bytes under the folder open as `rootFd` (not closed here); yields to the event loop every few ms. */
export async function bytesUnder(rootFd: number): Promise<number> {
  const seen = new Set<string>();
  const levels: Level[] = [];
  let total = 0;
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
      total += st.blocks * 512;
      if (!st.isDirectory() || levels.length > MAX_USAGE_DEPTH) continue;
      const child = enter(level.fd, entry.name);
      if (child) levels.push(child);
    }
    return total;
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

function release(level: Level): void {
  try {
    level.dir.closeSync();
  } catch {
    /* already closed: Dir closes itself once */
  }
  if (level.owned) closeSync(level.fd);
}
