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
import { closeSync, constants, openSync, statfsSync } from "node:fs";
import { formatBytes } from "./archive-limits";
import { MAX_USAGE_DEPTH, usageUnder } from "./fs-at/usage";

const { O_RDONLY, O_DIRECTORY } = constants;

export const DEFAULT_DISK_LIMIT_BYTES = 5 * 1024 ** 3;

export class DiskLimitError extends Error {
  constructor(
    readonly limitBytes: number,
    readonly usedBytes: number,
    wanted = 0,
    /** The count found a folder deeper than it goes (fs-at/usage.ts): what is in it is unknown. */
    tooDeep = false,
  ) {
    super(
      tooDeep
        ? `the workspace's disk limit of ${formatBytes(limitBytes)} cannot be kept: a folder more than ${MAX_USAGE_DEPTH} levels deep holds files the runner does not count; ` +
            `delete that folder to write again`
        : `the workspace's disk limit of ${formatBytes(limitBytes)} is reached (${formatBytes(usedBytes)} used${wanted ? `, ${formatBytes(wanted)} more asked` : ""}); ` +
            `delete files to make room, or ask an org admin to raise the limit`,
    );
    this.name = "DiskLimitError";
  }
}

export interface DiskLimitOptions {
  limitBytes?: number;
  /** The folder is a file system of its own of the limit's size (disk-image.ts). */
  kernel?: boolean;
  /** How long a measured total is trusted before a write has the folder walked again (in the background). */
  measureEveryMs?: number;
}

/** Free bytes of the file system under the workspace, taken before a command (see afterCommand). */
export type DiskMark = number;

/** One workspace's limit; `guardFor` plugs into WorkspaceFs (its `writeGuard`). */
export class DiskLimit {
  limitBytes: number;
  readonly kernel: boolean;
  private measured?: { at: number; bytes: number; tooDeep: boolean };
  private readonly measureEveryMs: number;
  private walking?: Promise<number>;
  private queued?: Promise<number>;

  /** `root` gives the workspace folder's descriptor path (WorkspaceFs.cwd) each time. */
  constructor(
    private readonly root: () => string,
    opts: DiskLimitOptions = {},
  ) {
    this.limitBytes = opts.limitBytes ?? DEFAULT_DISK_LIMIT_BYTES;
    this.kernel = opts.kernel ?? false;
    this.measureEveryMs = opts.measureEveryMs ?? 2000;
  }

  /** Bytes in use as last known (kernel: what the file system says now; measured: the last walk plus writes since). */
  usage(): number {
    // The file system's own metadata is not the workspace's: what is used is the limit less what is free.
    if (this.kernel) return Math.max(0, this.limitBytes - this.room());
    return this.measured?.bytes ?? 0;
  }

  /**
   * Bytes in use by a walk that starts after this call. Walks are shared: one asked for while
   * another runs starts when it ends, once for everyone who asked meanwhile.
   */
  measure(): Promise<number> {
    if (this.kernel) return Promise.resolve(this.usage());
    if (!this.walking) return this.walk();
    this.queued ??= this.walking
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.walk();
      });
    return this.queued;
  }

  /** The count when a walk finished within `maxAgeMs` (plus writes since), else the next walk's. */
  recent(maxAgeMs: number): Promise<number> {
    if (!this.kernel && this.measured && Date.now() - this.measured.at <= maxAgeMs) {
      return Promise.resolve(this.measured.bytes);
    }
    return this.measure();
  }

  private walk(): Promise<number> {
    const started = Date.now();
    const walking = (async () => {
      const fd = openSync(this.root(), O_RDONLY | O_DIRECTORY);
      try {
        const { bytes, tooDeep } = await usageUnder(fd);
        this.measured = { at: started, bytes, tooDeep };
        return bytes;
      } finally {
        closeSync(fd);
      }
    })();
    this.walking = walking;
    void walking.then(
      () => this.walking === walking && (this.walking = undefined),
      () => this.walking === walking && (this.walking = undefined),
    );
    return walking;
  }

  /** Measures again in the background when the count is older than measureEveryMs. */
  private refreshIfOld(): void {
    if (this.kernel || this.walking) return;
    if (this.measured && Date.now() - this.measured.at <= this.measureEveryMs) return;
    this.measure().catch(() => undefined);
  }

  /** Bytes still free under the limit. */
  room(): number {
    if (this.kernel) {
      const s = statfsSync(this.root());
      return s.bavail * s.bsize;
    }
    // What lies below the deepest folder counted is unknown: no room is assumed there.
    if (this.measured?.tooDeep) return 0;
    return Math.max(0, this.limitBytes - this.usage());
  }

  /**
   * Makes the count fit to decide on writing `bytes` more: walks first when there is no count
   * yet or when the count would refuse them (files may have been deleted since), else uses it
   * and has it refreshed in the background when old.
   */
  async settle(bytes: number): Promise<void> {
    if (this.kernel) return;
    if (!this.measured || bytes > this.room()) await this.measure();
    else this.refreshIfOld();
  }

  /** Throws DiskLimitError when writing `bytes` more would pass the limit (on the settled count). */
  check(bytes: number): void {
    if (bytes > this.room()) throw this.reached(bytes);
    if (this.measured) this.measured.bytes += bytes;
  }

  /** A write's error as the limit's when the disk (the limit's image) is full; else itself. */
  explain(err: unknown): unknown {
    const code = (err as NodeJS.ErrnoException)?.code;
    if (code !== "ENOSPC" && code !== "EDQUOT" && code !== "EFBIG") return err;
    const used = this.usage();
    // Measured: the disk under the limit filled up (other workspaces, the host), not the limit;
    // the caller names the full disk itself (fs-at's diskFull).
    if (!this.kernel && used < this.limitBytes && !this.measured?.tooDeep) return err;
    return this.reached();
  }

  /**
   * What WorkspaceFs calls around each write (`files`: the same WorkspaceFs). A write counts by
   * what it adds over the file it replaces, so shrinking a file, or putting back what a failed
   * change replaced, is never refused.
   */
  guardFor(files: { lstat(input: string): { stats: { size: number } } | null }): {
    settle(bytes: number): Promise<void>;
    before(bytes: number, input: string): void;
    failed(err: unknown): unknown;
  } {
    return {
      settle: (bytes) => this.settle(bytes),
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

  /** Taken before a command runs, for afterCommand. */
  mark(): DiskMark {
    return this.kernel ? 0 : hostFree(this.root());
  }

  /**
   * A line for a command's output when it ended with the workspace at or past its limit; null
   * otherwise. The folder is walked again, but a command is not kept waiting seconds on a huge
   * workspace: it wrote at most what the disk under the workspace lost meanwhile, so when the count
   * plus that stays under the limit, the walk is waited for only WALK_WAIT_MS and otherwise left to
   * finish in the background (a workspace it finds past the limit is told so after the next command).
   */
  async afterCommand(mark: DiskMark): Promise<string | null> {
    if (this.kernel) {
      // ext4 keeps up to 2% back for delayed allocation: a write fails with that much still shown free.
      if (this.room() >= Math.max(2 * 1024 ** 2, this.limitBytes * 0.03)) return null;
      return `[quiver] ${new DiskLimitError(this.limitBytes, this.usage()).message}`;
    }
    const grew = Math.max(0, mark - hostFree(this.root()));
    const walk = this.measure();
    walk.catch(() => undefined);
    if (this.measured && !this.measured.tooDeep && this.measured.bytes + grew < this.limitBytes) {
      this.measured.bytes += grew;
      const used = await within(walk, WALK_WAIT_MS);
      return used === undefined ? null : this.noticeAt(used);
    }
    return this.noticeAt(await walk);
  }

  private noticeAt(used: number): string | null {
    return used >= this.limitBytes || this.measured?.tooDeep ? `[quiver] ${this.reached().message}` : null;
  }

  private reached(wanted = 0): DiskLimitError {
    return new DiskLimitError(this.limitBytes, this.usage(), wanted, !this.kernel && !!this.measured?.tooDeep);
  }
}

/** How long a command's result waits for the walk after it when the disk says it cannot have passed the limit. */
const WALK_WAIT_MS = 300;

/** The promise's value when it settles within `ms`; undefined after that (or when it fails). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

function hostFree(path: string): number {
  const s = statfsSync(path);
  return s.bavail * s.bsize;
}
