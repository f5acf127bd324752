// The rules an uploaded archive is held to before and while it is extracted: the ceilings
// (bytes in all, bytes per entry, entries, inflation ratio), the names an entry may have, and a
// counter of the bytes actually inflated, never the sizes an archive's headers claim.
import { posix } from "node:path";

export class ArchiveError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArchiveError";
  }
}

export interface ArchiveLimits {
  /** Bytes of all files once extracted (counted as inflated, not as declared). */
  maxTotalBytes: number;
  /** Bytes of one file once extracted. */
  maxEntryBytes: number;
  /** Files, folders and other entries. */
  maxEntries: number;
  /** Inflated bytes per archive byte, checked once more than `ratioFloorBytes` came out. */
  maxRatio: number;
  ratioFloorBytes: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxTotalBytes: 2 * 1024 ** 3,
  maxEntryBytes: 512 * 1024 ** 2,
  maxEntries: 50_000,
  maxRatio: 200,
  ratioFloorBytes: 16 * 1024 ** 2,
};

const MAX_NAME_BYTES = 255;
const MAX_PATH_BYTES = 4096;
const MAX_DEPTH = 64;

const show = (s: string) => JSON.stringify(s);
export const formatBytes = (n: number) =>
  n >= 1024 ** 3
    ? `${+(n / 1024 ** 3).toFixed(1)} GB`
    : n >= 1024 ** 2
      ? `${+(n / 1024 ** 2).toFixed(1)} MB`
      : n >= 1024
        ? `${+(n / 1024).toFixed(1)} KB`
        : `${n} bytes`;

/**
 * An entry's name as components inside the destination. Refused: absolute paths (and Windows
 * drive or UNC forms), backslashes, `..` anywhere, NUL and other control characters (C1 too),
 * text-direction overrides, `.git` at any depth, names or paths too long or deep. `.` and empty components are dropped (`./a//b` is `a/b`).
 */
export function entryComponents(raw: string): string[] {
  if (raw.length === 0) throw new ArchiveError("the archive has an entry with an empty name");
  if (/[\x00-\x1f\x7f-\x9f]/.test(raw))
    throw new ArchiveError(`entry ${show(raw)} has a control character in its name`);
  // Bidirectional overrides and isolates make a name show as another (`txt.exe` as `exe.txt`).
  if (/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u.test(raw))
    throw new ArchiveError(`entry ${show(raw)} has a text-direction character in its name`);
  if (raw.includes("\\")) throw new ArchiveError(`entry ${show(raw)} has a backslash in its name (a Windows path)`);
  if (raw.startsWith("/") || /^[a-zA-Z]:/.test(raw)) throw new ArchiveError(`entry ${show(raw)} has an absolute path`);
  const parts = raw.split("/").filter((c) => c !== "" && c !== ".");
  if (parts.includes(".."))
    throw new ArchiveError(`entry ${show(raw)} has a ".." segment, which would lead out of the folder`);
  if (parts.length === 0) return parts;
  if (parts.length > MAX_DEPTH)
    throw new ArchiveError(`entry ${show(raw)} is nested more than ${MAX_DEPTH} folders deep`);
  if (Buffer.byteLength(raw) > MAX_PATH_BYTES)
    throw new ArchiveError(`entry ${show(raw.slice(0, 80))}… has a path longer than ${MAX_PATH_BYTES} bytes`);
  for (const p of parts)
    if (Buffer.byteLength(p) > MAX_NAME_BYTES)
      throw new ArchiveError(`entry ${show(raw)} has a name longer than ${MAX_NAME_BYTES} bytes`);
  // At any depth and in any case: a repository's config (core.fsmonitor, hooks) runs for any git
  // started inside its folder, and case-insensitive disks take `.GIT` for `.git`.
  if (parts.some((p) => p.toLowerCase() === ".git"))
    throw new ArchiveError(`entry ${show(raw)} is inside .git; an archive cannot carry git internals (hooks, config)`);
  return parts;
}

/**
 * Names seen so far: an exact repeat of a file is refused (in a tar the later entry would replace
 * the earlier one, the classic way to swap a file for something else), and so are two names that
 * differ only in case or Unicode form, which clash on the case-insensitive disks of the people who
 * download them and make one file look like another in the tree.
 */
export class NameRegistry {
  private readonly seen = new Map<string, { name: string; dir: boolean }>();

  add(parts: string[], dir: boolean): void {
    // Every parent is a folder, whether or not the archive lists it.
    for (let i = 1; i <= parts.length; i++) {
      const name = parts.slice(0, i).join("/");
      const isDir = i < parts.length || dir;
      const key = name.normalize("NFC").toLowerCase();
      const before = this.seen.get(key);
      if (!before) {
        this.seen.set(key, { name, dir: isDir });
        continue;
      }
      if (before.name !== name)
        throw new ArchiveError(
          `entries ${show(before.name)} and ${show(name)} differ only in letter case or Unicode form`,
        );
      if (before.dir && isDir) continue;
      if (before.dir !== isDir)
        throw new ArchiveError(`entry ${show(name)} is both a file and a folder in the archive`);
      throw new ArchiveError(`entry ${show(name)} appears twice in the archive`);
    }
  }
}

/** Counts what comes out of the archive against the ceilings, as it comes. */
export class InflationBudget {
  total = 0;
  entries = 0;

  constructor(
    readonly limits: ArchiveLimits,
    readonly archiveBytes: number,
    /** Names the limit that `maxTotalBytes` stands for when it is the disk's room, not the archive ceiling. */
    readonly totalReason = "the archive ceiling",
  ) {}

  entry(name: string): void {
    if (++this.entries > this.limits.maxEntries)
      throw new ArchiveError(
        `the archive has more than ${this.limits.maxEntries.toLocaleString("en-US")} entries (the ceiling); "${name}" is one too many`,
      );
  }

  /** Adds `n` inflated bytes of the entry `name`, which has now given `entryBytes`. */
  bytes(name: string, n: number, entryBytes: number): void {
    this.total += n;
    if (entryBytes > this.limits.maxEntryBytes)
      throw new ArchiveError(
        `entry ${show(name)} inflates past ${formatBytes(this.limits.maxEntryBytes)}, the ceiling for one file`,
      );
    if (this.total > this.limits.maxTotalBytes)
      throw new ArchiveError(
        `the archive inflates past ${formatBytes(this.limits.maxTotalBytes)} (${this.totalReason})`,
      );
    if (this.total > this.limits.ratioFloorBytes && this.total > this.limits.maxRatio * this.archiveBytes) {
      throw new ArchiveError(
        `the archive inflates more than ${this.limits.maxRatio} times its own size of ${formatBytes(this.archiveBytes)} (a decompression bomb); refused at ${formatBytes(this.total)}`,
      );
    }
  }
}

/** The mode an extracted file or folder gets: permission bits only (no setuid, setgid, sticky), owner always able to read and write. */
export const safeMode = (mode: number | undefined, dir: boolean) =>
  ((mode ?? (dir ? 0o755 : 0o644)) & 0o777) | (dir ? 0o700 : 0o600);

export const joinParts = (parts: string[]) => posix.join(...parts);

/** One entry as a reader sees it, before any check. */
export interface ArchiveEntry {
  name: string;
  /** "sparse": a GNU sparse file (tar type 'S', or a PAX header with GNU.sparse.* keys). */
  kind: "file" | "dir" | "symlink" | "hardlink" | "device" | "fifo" | "sparse" | "other";
  mode?: number;
  /** What the headers claim; compared with what was inflated, never trusted for a ceiling. */
  declaredSize?: number;
  linkTarget?: string;
}

/** What the readers hand entries to: data chunks arrive in order, synchronously handled. */
export interface EntrySink {
  /** Returns a consumer of the entry's bytes (files), or null when it has none. Throws to refuse. */
  begin(entry: ArchiveEntry): { data(chunk: Buffer): void; end(): void } | null;
}
