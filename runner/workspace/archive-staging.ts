// Where an archive is extracted before it counts: a staging folder inside the destination's own
// directory descriptor, written only through descriptors (each folder opened with O_NOFOLLOW |
// O_DIRECTORY from the one before, each file created O_EXCL | O_NOFOLLOW), so neither a name the
// checks missed nor a link a racing process plants can make a write land outside it.
//
// Crash safety: `.quiver-extract-<pid>-<rand>` is being filled (a kill -9 leaves it, and the next
// recoverExtractions() removes it); it is renamed to `.quiver-ready-<rand>` in one step when the
// whole archive passed; its entries are then moved into place, and a ready folder found at start
// is finished the same way. A refused archive is removed at once: nothing half-extracted stays.
// Both removals go in slices with their depth bounded (fs-at/remove.ts), and the moves into place
// and the check for names already there stream their listing in slices (eachName): the folders
// lie in the workspace, where the agent's commands can grow a tree of any depth or width inside
// them, and one runner's event loop serves every workspace on it.
import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  type Dir,
  fchmodSync,
  lstatSync,
  mkdirSync,
  opendirSync,
  openSync,
  renameSync,
  rmdirSync,
  writeSync,
} from "node:fs";
import { opendir } from "node:fs/promises";
import { removeEntrySliced } from "./fs-at/remove";
import { Slices } from "./fs-at/slices";
import { at, fdPath } from "./fs-at/walk";
import { ArchiveError } from "./archive-limits";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
const EXTRACTING = ".quiver-extract-";
const READY = ".quiver-ready-";
const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** Staging folders of this process still in use (a reused pid must not delete them). */
const active = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return code(err) === "EPERM";
  }
}

/** Finishes or removes what an extraction killed midway left in the folder open as `dirFd`. */
export async function recoverExtractions(dirFd: number): Promise<{ removed: string[]; finished: string[] }> {
  const removed: string[] = [];
  const finished: string[] = [];
  // Streamed, only ours kept: the destination is the agent's to fill with a million names. Gathered
  // before any is handled, so that names moveOut() brings up are not taken for more of ours.
  const ours: string[] = [];
  for await (const e of await opendir(fdPath(dirFd), { bufferSize: 256 }))
    if (e.name.startsWith(EXTRACTING) || e.name.startsWith(READY)) ours.push(e.name);
  for (const name of ours) {
    if (active.has(name)) continue;
    if (name.startsWith(EXTRACTING)) {
      const pid = Number(name.slice(EXTRACTING.length).split("-")[0]);
      if (pid !== process.pid && alive(pid)) continue;
      // Claimed while it goes (over turns of the event loop): another extraction's recovery
      // into the same folder leaves it alone.
      active.add(name);
      try {
        await removeEntrySliced(dirFd, name);
      } finally {
        active.delete(name);
      }
      removed.push(name);
    } else {
      // Claimed likewise; gone by now means another recovery, listed before our claim, finished it.
      active.add(name);
      try {
        let fd: number;
        try {
          fd = openSync(at(dirFd, name), DIR_FLAGS);
        } catch (err) {
          if (code(err) === "ENOENT") continue;
          throw err;
        }
        await moveOut(dirFd, name, fd);
      } finally {
        active.delete(name);
      }
      finished.push(name);
    }
  }
  return { removed, finished };
}

/**
 * Calls `step` with each name in the folder open as `fd` (not closed here), read a batch at a
 * time and handed over in slices (fs-at/slices.ts), never the whole listing in one turn.
 */
async function eachName(fd: number, step: (name: string) => void): Promise<void> {
  const slices = new Slices();
  const dir: Dir = opendirSync(fdPath(fd), { bufferSize: 128 });
  try {
    for (let entry = dir.readSync(); entry; entry = dir.readSync()) {
      step(entry.name);
      if (slices.due()) await slices.next();
    }
  } finally {
    dir.closeSync();
  }
}

/**
 * Moves every entry of the ready folder `name`, open as `fd` (closed here), up into `dirFd`, then
 * removes the folder. Renaming out names already read leaves the rest to the listing under way
 * (as rm -r unlinks while it lists); a kill midway leaves the folder for recoverExtractions().
 */
async function moveOut(dirFd: number, name: string, fd: number): Promise<string[]> {
  const moved: string[] = [];
  try {
    await eachName(fd, (child) => {
      renameSync(at(fd, child), at(dirFd, child));
      moved.push(child);
    });
  } finally {
    closeSync(fd);
  }
  rmdirSync(at(dirFd, name));
  return moved;
}

export class Staging {
  private readonly name: string;
  private fd: number | undefined;
  /** Folders and the modes they get once every file is in (a read-only folder would block its own files). */
  private readonly dirModes = new Map<string, number>();

  /** Makes a fresh staging folder in the directory open as `destFd` (not ours to close). */
  constructor(private readonly destFd: number) {
    this.name = `${EXTRACTING}${process.pid}-${randomBytes(6).toString("hex")}`;
    active.add(this.name);
    mkdirSync(at(destFd, this.name), 0o700);
    this.fd = openSync(at(destFd, this.name), DIR_FLAGS);
  }

  /** Opens (making what is missing) the folder `parts` inside staging; the caller closes it. */
  private openDir(parts: string[]): number {
    if (this.fd === undefined) throw new Error("staging is closed");
    let dir = this.fd;
    for (const part of parts) {
      let next: number;
      try {
        next = openSync(at(dir, part), DIR_FLAGS);
      } catch (err) {
        try {
          if (code(err) !== "ENOENT") throw this.explain(err, parts.slice(0, parts.indexOf(part) + 1), dir, part);
          mkdirSync(at(dir, part), 0o700);
          next = openSync(at(dir, part), DIR_FLAGS);
        } catch (e) {
          if (dir !== this.fd) closeSync(dir);
          throw e;
        }
      }
      if (dir !== this.fd) closeSync(dir);
      dir = next;
    }
    // The root again as a descriptor of our own (/proc's magic link must be followed for that).
    return dir === this.fd ? openSync(fdPath(this.fd), O_RDONLY | O_DIRECTORY) : dir;
  }

  private explain(err: unknown, parts: string[], dir: number, name: string): Error {
    let c = code(err);
    const where = JSON.stringify(parts.join("/"));
    // O_NOFOLLOW | O_DIRECTORY on a link says ENOTDIR: tell a planted link from a file.
    try {
      if (lstatSync(at(dir, name)).isSymbolicLink()) c = "ELOOP";
    } catch {
      /* gone meanwhile: keep the first code */
    }
    if (c === "ELOOP") return new ArchiveError(`${where} became a symbolic link during extraction; refused`);
    if (c === "ENOTDIR") return new ArchiveError(`${where} has a part that is a file, not a folder`);
    return err as Error;
  }

  mkdir(parts: string[], mode: number): void {
    closeSync(this.openDir(parts));
    this.dirModes.set(parts.join("/"), mode);
  }

  /** Creates the file `parts` (it must not exist) and returns a writer for its bytes. */
  createFile(parts: string[], mode: number): { write(chunk: Buffer): void; close(): void } {
    const dir = this.openDir(parts.slice(0, -1));
    let fd: number;
    try {
      fd = openSync(at(dir, parts[parts.length - 1]), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
    } catch (err) {
      throw code(err) === "EEXIST"
        ? new ArchiveError(`entry ${JSON.stringify(parts.join("/"))} appears twice in the archive`)
        : this.explain(err, parts, dir, parts[parts.length - 1]);
    } finally {
      closeSync(dir);
    }
    let open = true;
    return {
      write(chunk) {
        for (let off = 0; off < chunk.length;) off += writeSync(fd, chunk, off, chunk.length - off);
      },
      close() {
        if (!open) return;
        open = false;
        try {
          fchmodSync(fd, mode);
        } finally {
          closeSync(fd);
        }
      },
    };
  }

  /**
   * The archive passed: folder modes are set, staging becomes ready in one rename, and its
   * entries move into the destination. Names already there are refused before anything moves.
   */
  async commit(): Promise<string[]> {
    if (this.fd === undefined) throw new Error("staging is closed");
    for (const [rel, mode] of [...this.dirModes].sort((a, b) => b[0].length - a[0].length)) {
      const fd = this.openDir(rel.split("/"));
      try {
        fchmodSync(fd, mode);
      } finally {
        closeSync(fd);
      }
    }
    await eachName(this.fd, (child) => {
      let exists = true;
      try {
        lstatSync(at(this.destFd, child));
      } catch {
        exists = false;
      }
      if (exists) throw new ArchiveError(`${JSON.stringify(child)} already exists in the destination folder`);
    });
    closeSync(this.fd);
    this.fd = undefined;
    const ready = `${READY}${this.name.slice(this.name.lastIndexOf("-") + 1)}`;
    active.add(ready);
    try {
      renameSync(at(this.destFd, this.name), at(this.destFd, ready));
      active.delete(this.name);
      return await moveOut(this.destFd, ready, openSync(at(this.destFd, ready), DIR_FLAGS));
    } finally {
      active.delete(ready);
    }
  }

  /** Removes everything extracted so far; the name stays claimed until it is gone. */
  async abort(): Promise<void> {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    try {
      await removeEntrySliced(this.destFd, this.name);
    } catch (err) {
      if (code(err) !== "ENOENT") throw err;
    } finally {
      active.delete(this.name);
    }
  }
}
