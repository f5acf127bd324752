// A workspace's disk limit (default 5 GB, set per org). Two ways, the first when it can be had:
//
// - kernel: the workspace folder is an ext4 image of the limit's size, loop-mounted on it
//   (disk-image.ts; needs root and loop devices). Every write past it — the runner's file ops, the
//   agent's commands, terminals — fails in the kernel with ENOSPC, which the runner's file ops and
//   commands then report naming the limit.
// - measured: the runner adds up the blocks the folder takes (through descriptors, each hard-linked
//   file once) and refuses a file op that would pass the limit. Commands are not stopped mid-write
//   then: a command that leaves the workspace past the limit is told so when it ends, and every
//   later file write is refused until files are deleted.
import { closeSync, constants, lstatSync, openSync, readdirSync, statfsSync } from "node:fs";
import { formatBytes } from "./archive-limits";
import { at, fdPath } from "./fs-at/walk";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

export const DEFAULT_DISK_LIMIT_BYTES = 5 * 1024 ** 3;

export class DiskLimitError extends Error {
  constructor(
    readonly limitBytes: number,
    readonly usedBytes: number,
    wanted = 0,
  ) {
    super(
      `the workspace's disk limit of ${formatBytes(limitBytes)} is reached (${formatBytes(usedBytes)} used${wanted ? `, ${formatBytes(wanted)} more asked` : ""}); ` +
        `delete files to make room, or ask an org admin to raise the limit`,
    );
    this.name = "DiskLimitError";
  }
}

/** Bytes the folder open as `dirFd` takes on disk: allocated blocks, links not followed, each inode once. */
export function measureUsage(dirFd: number, seen = new Set<string>()): number {
  let total = 0;
  for (const entry of readdirSync(fdPath(dirFd), { withFileTypes: true })) {
    let st;
    try {
      st = lstatSync(at(dirFd, entry.name), { bigint: false });
    } catch {
      continue; // gone meanwhile
    }
    const key = `${st.dev}:${st.ino}`;
    if (st.nlink > 1 && seen.has(key)) continue;
    seen.add(key);
    total += st.blocks * 512;
    if (st.isDirectory()) {
      let fd: number;
      try {
        fd = openSync(at(dirFd, entry.name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      } catch {
        continue; // swapped for a link or gone: not ours to count
      }
      try {
        total += measureUsage(fd, seen);
      } finally {
        closeSync(fd);
      }
    }
  }
  return total;
}

export interface DiskLimitOptions {
  limitBytes?: number;
  /** The folder is a file system of its own of the limit's size (disk-image.ts). */
  kernel?: boolean;
  /** How long a measured total is trusted before the folder is walked again. */
  measureEveryMs?: number;
}

/** One workspace's limit; `guard` plugs into WorkspaceFs (its `writeGuard`). */
export class DiskLimit {
  limitBytes: number;
  readonly kernel: boolean;
  private measured?: { at: number; bytes: number };
  private readonly measureEveryMs: number;

  /** `root` gives the workspace folder's descriptor path (WorkspaceFs.cwd) each time. */
  constructor(
    private readonly root: () => string,
    opts: DiskLimitOptions = {},
  ) {
    this.limitBytes = opts.limitBytes ?? DEFAULT_DISK_LIMIT_BYTES;
    this.kernel = opts.kernel ?? false;
    this.measureEveryMs = opts.measureEveryMs ?? 2000;
  }

  /** Bytes in use now (kernel: what the file system says; measured: at most measureEveryMs old). */
  usage(fresh = false): number {
    const dir = this.root();
    // The file system's own metadata is not the workspace's: what is used is the limit less what is free.
    if (this.kernel) return Math.max(0, this.limitBytes - this.room());
    const now = Date.now();
    if (fresh || !this.measured || now - this.measured.at > this.measureEveryMs) {
      const fd = openSync(dir, O_RDONLY | O_DIRECTORY);
      try {
        this.measured = { at: now, bytes: measureUsage(fd) };
      } finally {
        closeSync(fd);
      }
    }
    return this.measured.bytes;
  }

  /** Bytes still free under the limit. */
  room(): number {
    if (this.kernel) {
      const s = statfsSync(this.root());
      return s.bavail * s.bsize;
    }
    return Math.max(0, this.limitBytes - this.usage());
  }

  /** Throws DiskLimitError when writing `bytes` more would pass the limit. */
  check(bytes: number): void {
    if (bytes <= this.room()) {
      if (this.measured) this.measured.bytes += bytes;
      return;
    }
    // The cached total may be stale the other way (files deleted since): look again before refusing.
    if (!this.kernel && bytes <= Math.max(0, this.limitBytes - this.usage(true))) return;
    throw new DiskLimitError(this.limitBytes, this.usage(), bytes);
  }

  /** A write's error as the limit's when the disk (the limit's image) is full; else itself. */
  explain(err: unknown): unknown {
    const code = (err as NodeJS.ErrnoException)?.code;
    if (code !== "ENOSPC" && code !== "EDQUOT" && code !== "EFBIG") return err;
    const used = this.usage(true);
    // Measured: the disk under the limit filled up (other workspaces, the host), not the limit;
    // the caller names the full disk itself (fs-at's diskFull).
    if (!this.kernel && used < this.limitBytes) return err;
    return new DiskLimitError(this.limitBytes, used);
  }

  /**
   * What WorkspaceFs calls around each write (`files`: the same WorkspaceFs). A write counts by
   * what it adds over the file it replaces, so shrinking a file, or putting back what a failed
   * change replaced, is never refused.
   */
  guardFor(files: { lstat(input: string): { stats: { size: number } } | null }): {
    before(bytes: number, input: string): void;
    failed(err: unknown): unknown;
  } {
    return {
      before: (bytes, input) => {
        let existing = 0;
        try {
          existing = files.lstat(input)?.stats.size ?? 0;
        } catch {
          /* the write itself will say what is wrong with the path */
        }
        if (bytes > existing) this.check(bytes - existing);
      },
      failed: (err) => this.explain(err),
    };
  }

  /** A line for a command's output when it ended with the workspace at or past its limit; null otherwise. */
  notice(): string | null {
    const used = this.usage(true);
    // ext4 keeps up to 2% back for delayed allocation: a write fails with that much still shown free.
    const full = this.kernel ? this.room() < Math.max(2 * 1024 ** 2, this.limitBytes * 0.03) : used >= this.limitBytes;
    if (!full) return null;
    return `[quiver] ${new DiskLimitError(this.limitBytes, used).message}`;
  }
}
