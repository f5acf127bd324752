// Extracts an uploaded archive (.zip, .tar.gz/.tgz or plain .tar, told apart by their first bytes,
// not their names) into a folder given as a directory descriptor. Every entry is checked before
// a byte of it is written (archive-limits.ts), bytes are counted as they inflate, and everything
// is written into a staging folder through descriptors (archive-staging.ts) that becomes visible
// only once the whole archive passed. Links are refused outright: see refuseLink below.
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { readTar } from "./archive-tar";
import { readZip } from "./archive-zip";
import {
  ArchiveError,
  DEFAULT_ARCHIVE_LIMITS,
  entryComponents,
  formatBytes,
  InflationBudget,
  NameRegistry,
  safeMode,
  type ArchiveEntry,
  type ArchiveLimits,
  type EntrySink,
} from "./archive-limits";
import { recoverExtractions, Staging } from "./archive-staging";

export { ArchiveError, DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits } from "./archive-limits";
export { recoverExtractions } from "./archive-staging";

export interface ExtractOptions {
  /** The archive on this machine. */
  archivePath: string;
  /** The destination folder's descriptor (not closed here); its entries must not clash with the archive's. */
  destFd: number;
  limits?: Partial<ArchiveLimits>;
  /** Bytes the destination may still grow by (the workspace's disk limit less its usage), and that limit's name. */
  room?: { bytes: number; reason: string };
}

export interface ExtractResult {
  format: "zip" | "tar.gz" | "tar";
  files: number;
  dirs: number;
  bytes: number;
  /** The top-level names now in the destination. */
  entries: string[];
}

type Format = ExtractResult["format"];

function sniff(path: string): { format: Format; size: number } {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    const head = Buffer.alloc(512);
    const n = readSync(fd, head, 0, 512, 0);
    const size = fstatSync(fd).size;
    if (n >= 4 && head.readUInt32LE(0) === 0x04034b50) return { format: "zip", size };
    if (n >= 4 && head.readUInt32LE(0) === 0x06054b50) return { format: "zip", size };
    if (n >= 2 && head[0] === 0x1f && head[1] === 0x8b) return { format: "tar.gz", size };
    if (n === 512 && head.toString("latin1", 257, 262) === "ustar") return { format: "tar", size };
    throw new ArchiveError("the upload is not a .zip, .tar.gz, .tgz or .tar archive");
  } finally {
    closeSync(fd);
  }
}

/**
 * Why links are refused rather than checked: a link's target is resolved when it is followed,
 * through other links, so a lexical check is not enough (`d -> .` and `e -> d/..` both look
 * inside, yet `e` leads to the folder above); and a file written later "through" a link is the
 * classic escape of extractors. A project's source rarely needs them; `tar --dereference` or a
 * zip made without --symlinks stores the files instead.
 */
function refuseLink(entry: ArchiveEntry): never {
  const what = entry.kind === "symlink" ? "a symbolic link" : "a hard link";
  const to = entry.linkTarget ? ` to ${JSON.stringify(entry.linkTarget)}` : "";
  throw new ArchiveError(
    `entry ${JSON.stringify(entry.name)} is ${what}${to}; archives with links are refused (make it with tar --dereference, or zip without --symlinks)`,
  );
}

export async function extractArchive(opts: ExtractOptions): Promise<ExtractResult> {
  const { format, size } = sniff(opts.archivePath);
  const limits = { ...DEFAULT_ARCHIVE_LIMITS, ...opts.limits };
  let reason = `the ceiling of ${formatBytes(limits.maxTotalBytes)} for an archive`;
  if (opts.room && opts.room.bytes < limits.maxTotalBytes) {
    limits.maxTotalBytes = Math.max(0, opts.room.bytes);
    reason = opts.room.reason;
  }
  const budget = new InflationBudget(limits, size, reason);
  const names = new NameRegistry();
  await recoverExtractions(opts.destFd);
  const staging = new Staging(opts.destFd);
  const open = new Set<{ close(): void }>();
  const result: ExtractResult = { format, files: 0, dirs: 0, bytes: 0, entries: [] };

  const sink: EntrySink = {
    begin(entry) {
      budget.entry(entry.name);
      const parts = entryComponents(entry.name);
      if (entry.kind === "symlink" || entry.kind === "hardlink") refuseLink(entry);
      if (entry.kind === "device") throw new ArchiveError(`entry ${JSON.stringify(entry.name)} is a device; refused`);
      if (entry.kind === "fifo")
        throw new ArchiveError(`entry ${JSON.stringify(entry.name)} is a FIFO (named pipe); refused`);
      // node-tar has no sparse support: it skips a type 'S' entry and writes a PAX sparse file's
      // condensed data (its map and non-zero runs) as if it were the file, under a made-up name.
      if (entry.kind === "sparse")
        throw new ArchiveError(
          `entry ${JSON.stringify(entry.name)} is a sparse file (tar --sparse); archives with sparse files are refused (make it again without --sparse / -S)`,
        );
      if (entry.kind === "other")
        throw new ArchiveError(`entry ${JSON.stringify(entry.name)} is neither a file nor a folder; refused`);
      const dir = entry.kind === "dir";
      if (parts.length === 0) {
        if (dir) return null;
        throw new ArchiveError(`entry ${JSON.stringify(entry.name)} is a file without a name`);
      }
      names.add(parts, dir);
      if (dir) {
        staging.mkdir(parts, safeMode(entry.mode, true));
        result.dirs++;
        return null;
      }
      const writer = staging.createFile(parts, safeMode(entry.mode, false));
      open.add(writer);
      result.files++;
      let written = 0;
      return {
        data(chunk) {
          written += chunk.length;
          budget.bytes(entry.name, chunk.length, written);
          writer.write(chunk);
        },
        end() {
          open.delete(writer);
          writer.close();
          if (entry.declaredSize !== undefined && entry.declaredSize !== written) {
            throw new ArchiveError(
              `entry ${JSON.stringify(entry.name)} claims ${entry.declaredSize} bytes but holds ${written}; the archive is damaged or lies in its headers`,
            );
          }
        },
      };
    },
  };

  try {
    if (format === "zip") await readZip(opts.archivePath, sink, limits.maxEntries);
    else
      await readTar(
        opts.archivePath,
        format === "tar.gz",
        sink,
        limits.maxTotalBytes + (limits.maxEntries + 16) * 2048 + 1024 ** 2,
      );
    for (const w of open) w.close();
    open.clear();
    result.entries = await staging.commit();
    result.bytes = budget.total;
    return result;
  } catch (err) {
    for (const w of open) {
      try {
        w.close();
      } catch {
        /* the staging folder goes anyway */
      }
    }
    await staging.abort();
    throw err;
  }
}
