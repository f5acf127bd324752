// Every file operation of the runner on a workspace goes through here: the workspace root is
// opened once as a directory descriptor and each path is walked from it with no-follow opens
// (walk.ts), so a link or a folder swapped for one by a racing process cannot lead a read or a
// write outside. The operation itself then happens on the descriptors the walk opened: content
// is read from the fd, a write is a temp file made in the parent's fd and renamed within it
// (rename never follows a last component), and a folder is removed entry by entry through fds,
// in slices with its depth bounded (remove.ts): the agent decides how deep and wide a tree is.
import {
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  constants,
  type Dirent,
  type Stats,
} from "node:fs";
import { opendir, readdir } from "node:fs/promises";
import { SmallestNames } from "./smallest-names";
import { diskFull, readChild, readUpTo, READ_FLAGS, replaceIn } from "./fd";
import { goneName } from "./names";
import { removeEntrySliced } from "./remove";
import { at, fdPath, PathError, walk, type Walked, type WalkOptions } from "./walk";

export { at, fdPath, isInside, PathError, MAX_LINK_HOPS } from "./walk";
export { DiskFullError, diskFull, TEMP_MARK } from "./fd";

const { O_RDONLY, O_NOFOLLOW, O_DIRECTORY } = constants;

export type ReadResult =
  | { kind: "missing" }
  | { kind: "dir" }
  /** A link, when the read did not follow links. */
  | { kind: "link" }
  /** A FIFO, socket or device. */
  | { kind: "other" }
  | { kind: "large"; size: number }
  | { kind: "file"; data: Buffer; mode: number };

const code = (err: unknown) => (err as NodeJS.ErrnoException).code;
const missing = (err: unknown) => code(err) === "ENOENT" || code(err) === "ENOTDIR";

/** One workspace's files, reached only through its root's directory descriptor. */
export class WorkspaceFs {
  private fd: number | undefined;
  /** Set by the workspace's disk limit (runner/workspace/disk-limit.ts): refuses a write past it, and names it when the disk is full. */
  writeGuard?: {
    /** Brings what `before` decides on up to date; awaited first (it may walk the folder). */
    settle?(bytes: number): Promise<void>;
    before(bytes: number, input: string): void;
    failed(err: unknown): unknown;
  };

  private constructor(
    readonly root: string,
    fd: number,
  ) {
    this.fd = fd;
  }

  /** Opens `root` (a real path) once. Needs Linux's /proc/self/fd to walk relative to it. */
  static open(root: string): WorkspaceFs {
    return WorkspaceFs.adopt(root, openSync(root, O_RDONLY | O_DIRECTORY));
  }

  /**
   * Takes `fd`, a directory already opened (a `--root` runner's workspace, opened with
   * O_NOFOLLOW from the root's descriptor, so a folder swapped for a link is never followed);
   * `root` is its path for messages and children. Closes `fd` when it refuses.
   */
  static adopt(root: string, fd: number): WorkspaceFs {
    try {
      if (!fstatSync(fd).isDirectory() || !lstatSync(fdPath(fd)).isSymbolicLink()) throw new Error("no /proc/self/fd");
      lstatSync(`${fdPath(fd)}/.`);
    } catch {
      closeSync(fd);
      throw new Error(
        "the runner's file operations need Linux with /proc mounted (they walk paths through /proc/self/fd)",
      );
    }
    return new WorkspaceFs(root, fd);
  }

  /** The root as a working directory for a child process: the directory the descriptor holds,
   *  not whatever is at the root's path by the time the child starts. */
  get cwd(): string {
    if (this.fd === undefined) throw new Error("the workspace is closed");
    return fdPath(this.fd);
  }

  /** Walks `input`; the caller closes what it returns. */
  walk(input: string, opts?: WalkOptions): Walked {
    // A closed root's number may already belong to another file: never walk from it.
    if (this.fd === undefined) throw new Error("the workspace is closed");
    return walk(this.fd, this.root, input, opts);
  }

  /** Runs `fn` on a walk and always releases it. */
  async with<T>(input: string, opts: WalkOptions, fn: (w: Walked) => T | Promise<T>): Promise<T> {
    const w = this.walk(input, opts);
    try {
      return await fn(w);
    } finally {
      w.close();
    }
  }

  /** The last component itself (a link is not followed); null when it or a parent is missing. */
  lstat(input: string): { rel: string; stats: Stats } | null {
    let w: Walked;
    try {
      w = this.walk(input);
    } catch (err) {
      if (err instanceof PathError && missing(err)) return null;
      throw err;
    }
    try {
      return { rel: w.rel, stats: lstatSync(at(w.dir, w.name || ".")) };
    } catch (err) {
      if (missing(err)) return null;
      throw err;
    } finally {
      w.close();
    }
  }

  /** What the path leads to, links inside followed; null when missing. */
  stat(input: string): { rel: string; stats: Stats } | null {
    let w: Walked;
    try {
      w = this.walk(input, { open: READ_FLAGS });
    } catch (err) {
      if (err instanceof PathError && missing(err)) return null;
      throw err;
    }
    try {
      return w.fd === undefined ? null : { rel: w.rel, stats: fstatSync(w.fd) };
    } finally {
      w.close();
    }
  }

  /** A regular file's bytes. `follow`: links inside are followed (reads); else a link is reported. */
  async readFile(input: string, opts: { follow: boolean; maxBytes?: number }): Promise<ReadResult> {
    let w: Walked;
    try {
      w = this.walk(input, opts.follow ? { open: READ_FLAGS } : {});
    } catch (err) {
      if (err instanceof PathError && missing(err)) return { kind: "missing" };
      throw err;
    }
    try {
      let fd = w.fd;
      if (!opts.follow) {
        try {
          fd = openSync(at(w.dir, w.name), READ_FLAGS | O_NOFOLLOW);
        } catch (err) {
          if (code(err) === "ELOOP") return { kind: "link" };
          if (missing(err)) return { kind: "missing" };
          throw err;
        }
      }
      if (fd === undefined) return { kind: "missing" };
      try {
        const st = fstatSync(fd);
        if (st.isDirectory()) return { kind: "dir" };
        if (!st.isFile()) return { kind: "other" };
        if (opts.maxBytes !== undefined && st.size > opts.maxBytes) return { kind: "large", size: st.size };
        // What was there at the fstat, at most: a file grown since is cut there, or too large.
        const { data, more } = await readUpTo(fd, opts.maxBytes ?? st.size);
        if (more && opts.maxBytes !== undefined) return { kind: "large", size: Math.max(st.size, data.length + 1) };
        return { kind: "file", data, mode: st.mode & 0o7777 };
      } finally {
        if (fd !== w.fd) closeSync(fd);
      }
    } finally {
      w.close();
    }
  }

  /** A folder's entries (links inside followed to reach it); null when missing or not a folder. */
  async readdir(input: string): Promise<Dirent[] | null> {
    return this.inFolder(input, (fd) => readdir(fdPath(fd), { withFileTypes: true }));
  }

  /**
   * A folder's `first` entries in name order, streamed from the kernel so that no more than
   * `first` are held at once (a folder of millions of files is not read into memory), whether it
   * holds more, and, from the same walk, the bytes of one regular file in it (not through a link;
   * up to 1 MiB), null when it has none. Null when the folder is missing.
   */
  async listSmallest(
    input: string,
    first: number,
    file?: string,
  ): Promise<{ entries: Dirent[]; more: boolean; file: Buffer | null } | null> {
    return this.inFolder(input, async (fd) => {
      const content = file ? await readChild(fd, file, 1024 * 1024) : null;
      const kept = new SmallestNames<Dirent>(first);
      for await (const e of await opendir(fdPath(fd), { bufferSize: 256 })) kept.offer(e);
      return { entries: kept.sorted(), more: kept.dropped > 0, file: content };
    });
  }

  /** `use` of the folder at `input`, opened for reading (links inside followed to reach it); null
   *  when it is missing or not a folder. */
  private async inFolder<T>(input: string, use: (fd: number) => Promise<T>): Promise<T | null> {
    let w: Walked;
    try {
      w = this.walk(input, { open: READ_FLAGS | O_DIRECTORY });
    } catch (err) {
      if (err instanceof PathError && missing(err)) return null;
      throw err;
    }
    try {
      return w.fd === undefined ? null : await use(w.fd);
    } finally {
      w.close();
    }
  }

  /**
   * Replaces the file at `input` atomically: a fresh temp file in the parent's fd (O_EXCL |
   * O_NOFOLLOW), written and fsynced, renamed over the name. Missing parents are created.
   * Returns the directories it made (outermost first) for an undo.
   */
  async writeFile(input: string, data: Buffer | string, mode?: number): Promise<{ rel: string; created: string[] }> {
    let created: string[] = [];
    await this.writeGuard?.settle?.(Buffer.byteLength(data));
    this.writeGuard?.before(Buffer.byteLength(data), input);
    try {
      return await this.with(input, { write: true, create: true }, async (w) => {
        created = w.created;
        await replaceIn(w.dir, w.name, data, mode);
        return { rel: w.rel, created: w.created };
      });
    } catch (err) {
      for (const d of [...created].reverse()) {
        try {
          this.rmdir(d);
        } catch {
          break;
        }
      }
      // The limit's own words first (a full limit image is the limit reached), else the disk's.
      throw diskFull(this.writeGuard?.failed(err) ?? err, `${input} was not written and is left as it was`);
    }
  }

  /** mkdir -p: the folder and any missing parents; returns those it made, outermost first. */
  mkdir(input: string): { rel: string; created: string[] } {
    const w = this.walk(input, { write: true, create: true });
    try {
      try {
        mkdirSync(at(w.dir, w.name), 0o755);
        return { rel: w.rel, created: [...w.created, w.rel] };
      } catch (err) {
        if (code(err) === "EEXIST" && lstatSync(at(w.dir, w.name)).isDirectory())
          return { rel: w.rel, created: w.created };
        throw err;
      }
    } finally {
      w.close();
    }
  }

  /** Removes a file or link (never what a link points to). */
  unlink(input: string): void {
    const w = this.walk(input, { write: true });
    try {
      unlinkSync(at(w.dir, w.name));
    } finally {
      w.close();
    }
  }

  /** Removes an empty folder. */
  rmdir(input: string): void {
    const w = this.walk(input, { write: true });
    try {
      rmdirSync(at(w.dir, w.name));
    } finally {
      w.close();
    }
  }

  /** Moves `from` to `to` inside the workspace (missing parents of `to` are created). */
  rename(from: string, to: string): void {
    const a = this.walk(from, { write: true });
    try {
      const b = this.walk(to, { write: true, create: true });
      try {
        renameSync(at(a.dir, a.name), at(b.dir, b.name));
      } finally {
        b.close();
      }
    } finally {
      a.close();
    }
  }

  /**
   * rm -r through descriptors, a few milliseconds at a time (remove.ts): a folder swapped for a
   * link meanwhile loses the link, not its target. A missing path is an error, as for rm -r.
   */
  async removeTree(input: string): Promise<void> {
    const w = this.walk(input, { write: true });
    try {
      lstatSync(at(w.dir, w.name));
      await removeUnder(w.dir, w.name);
    } finally {
      w.close();
    }
  }

  /**
   * removeTree that a kill cannot leave half done: a folder is first renamed to a fresh
   * `.quiver-gone-<hex>` at the root (one rename: from the person's view it is there whole or
   * gone), then removed from there; what a kill leaves of it the next runner sweeps
   * (leftovers.ts). A file or link is one unlink already. A folder that cannot move to the root
   * (a mount point, another file system inside the workspace) is removed where it is, as before.
   */
  async removeTreeAtomic(input: string): Promise<void> {
    const w = this.walk(input, { write: true });
    let root: number | undefined;
    try {
      if (!lstatSync(at(w.dir, w.name)).isDirectory()) return unlinkSync(at(w.dir, w.name));
      const gone = goneName();
      try {
        // The root's own descriptor (this.cwd): the root path swapped for a link is not followed.
        renameSync(at(w.dir, w.name), `${this.cwd}/${gone}`);
      } catch (err) {
        if (code(err) === "EXDEV" || code(err) === "EBUSY") return await removeUnder(w.dir, w.name);
        throw err;
      }
      // A descriptor of the root of its own: the removal outlives a turn of the event loop, and
      // the workspace may be closed meanwhile (its number then another file's).
      root = openSync(this.cwd, O_RDONLY | O_DIRECTORY);
      try {
        await removeEntrySliced(root, gone);
      } catch (err) {
        // Something in it cannot be removed (a read-only folder): what is left goes back where
        // the person sees it, as rm -r leaves it, rather than hidden under a name of ours.
        try {
          renameSync(at(root, gone), at(w.dir, w.name));
        } catch {
          /* left for the sweep */
        }
        throw err;
      }
    } finally {
      if (root !== undefined) closeSync(root);
      w.close();
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/**
 * removeEntrySliced of `name` in `dir` through a descriptor of `dir` of its own: the removal
 * outlives turns of the event loop, and `dir` may be the root's, which close() may release
 * meanwhile (its number then another file's).
 */
async function removeUnder(dir: number, name: string): Promise<void> {
  const own = openSync(fdPath(dir), O_RDONLY | O_DIRECTORY);
  try {
    await removeEntrySliced(own, name);
  } finally {
    closeSync(own);
  }
}
