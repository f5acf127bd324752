// A git killed mid-write (with its runner, by kill -9 or a lost machine) leaves `.git/index.lock`,
// and every later git that writes the index fails on it ("Another git process seems to be
// running"): Commit and Pull would fail for good. git holds its lock's descriptor open until it
// renames or removes it, so a lock no process holds open is such a leftover, and goes. Only the
// workspace's own `.git` folder is looked in, opened without following a link (the agent writes
// the repository: a `.git` that is a link or a file naming another git dir is left alone).
import { closeSync, constants, lstatSync, openSync, unlinkSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { at } from "./fs-at/walk";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/** Whether git's stderr says a write failed on an index lock that exists. */
export const lockedIndex = (stderr: string) => /index\.lock'?: File exists/.test(stderr);

/** Descriptors looked at, at most, before a lock is taken to be held (the agent can open many). */
const MAX_FDS = 200_000;

/** Removes `<root>/.git/index.lock` when no process holds it open; true when it did. */
export async function removeStaleIndexLock(root: string): Promise<boolean> {
  let rootFd: number | undefined;
  let gitFd: number | undefined;
  try {
    rootFd = openSync(root, O_RDONLY | O_DIRECTORY);
    gitFd = openSync(at(rootFd, ".git"), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    const lock = lstatSync(at(gitFd, "index.lock"), { throwIfNoEntry: false });
    if (!lock?.isFile() || (await heldOpen(lock.dev, lock.ino))) return false;
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
 *  names it by a path of its own mount namespace). Asynchronous, so a /proc of many descriptors
 *  holds up no other work; past MAX_FDS it answers yes, leaving the lock. */
async function heldOpen(dev: number, ino: number): Promise<boolean> {
  let seen = 0;
  for (const pid of (await readdir("/proc")).filter((n) => /^\d+$/.test(n))) {
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    if ((seen += fds.length) > MAX_FDS) return true;
    for (const fd of fds) {
      const st = await stat(`/proc/${pid}/fd/${fd}`).catch(() => undefined);
      if (st && st.ino === ino && st.dev === dev) return true;
    }
  }
  return false;
}
