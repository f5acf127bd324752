// A git killed mid-write (with its runner, by kill -9 or a lost machine) leaves `.git/index.lock`,
// and every later git that writes the index fails on it ("Another git process seems to be
// running"): Commit and Pull would fail for good. git holds its lock's descriptor open until it
// renames or removes it, so a lock no process holds open is such a leftover, and goes. Only the
// workspace's own `.git` folder is looked in, opened without following a link (the agent writes
// the repository: a `.git` that is a link or a file naming another git dir is left alone).
import { closeSync, constants, lstatSync, openSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { at } from "./fs-at/walk";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/** Whether git's stderr says a write failed on an index lock that exists. */
export const lockedIndex = (stderr: string) => /index\.lock'?: File exists/.test(stderr);

/** Removes `<root>/.git/index.lock` when no process holds it open; true when it did. */
export function removeStaleIndexLock(root: string): boolean {
  let rootFd: number | undefined;
  let gitFd: number | undefined;
  try {
    rootFd = openSync(root, O_RDONLY | O_DIRECTORY);
    gitFd = openSync(at(rootFd, ".git"), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    const lock = lstatSync(at(gitFd, "index.lock"), { throwIfNoEntry: false });
    if (!lock?.isFile() || heldOpen(lock.dev, lock.ino)) return false;
    unlinkSync(at(gitFd, "index.lock"));
    return true;
  } catch {
    return false;
  } finally {
    if (gitFd !== undefined) closeSync(gitFd);
    if (rootFd !== undefined) closeSync(rootFd);
  }
}

/** Whether any process this one can see holds the file (device and inode: a sandboxed process
 *  names it by a path of its own mount namespace). */
function heldOpen(dev: number, ino: number): boolean {
  for (const pid of readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of fds) {
      let st;
      try {
        st = statSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue; // closed meanwhile, or something no path reaches (anon inodes)
      }
      if (st.ino === ino && st.dev === dev) return true;
    }
  }
  return false;
}
