// What fs-at does once a walk has opened the directory: reading a file from its descriptor, and
// replacing a file by a temp file made and renamed inside the directory's descriptor (rm -r
// through descriptors is remove.ts). Names here are single components, never paths.
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsync,
  openSync,
  read,
  renameSync,
  unlinkSync,
  write,
} from "node:fs";
import { promisify } from "node:util";
import { tempName } from "./names";
import { at } from "./walk";

export { TEMP_MARK } from "./names";

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants;

/** Non-blocking: a FIFO planted in the workspace must not hang the runner on open. */
export const READ_FLAGS = O_RDONLY | O_NONBLOCK | O_NOCTTY;
const readAt = promisify(read);
const CHUNK = 1024 * 1024;

/**
 * At most `max` bytes of `fd` from its start, and whether it holds more. Not readFile: that sizes
 * its buffer from its own fstat and reads to the end, so a file a command grows (a sparse
 * `truncate -s 1G`) between the caller's size check and the read was read whole, past any cap.
 */
export async function readUpTo(fd: number, max: number): Promise<{ data: Buffer; more: boolean }> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const want = Math.min(CHUNK, max - total);
    if (want <= 0) break;
    const chunk = Buffer.allocUnsafe(want);
    const { bytesRead } = await readAt(fd, chunk, 0, want, total);
    if (bytesRead === 0) return { data: Buffer.concat(chunks, total), more: false };
    chunks.push(bytesRead === want ? chunk : chunk.subarray(0, bytesRead));
    total += bytesRead;
  }
  const { bytesRead } = await readAt(fd, Buffer.alloc(1), 0, 1, total);
  return { data: Buffer.concat(chunks, total), more: bytesRead > 0 };
}
const fsyncFd = promisify(fsync);

/** A write the disk had no room for (ENOSPC, or the user's quota: EDQUOT). */
export class DiskFullError extends Error {
  readonly code = "ENOSPC";
  constructor(what: string) {
    super(
      `the disk is full (no space left on device): ${what}. ` +
        `Free some space (delete files, or clear build output and caches) and try again`,
    );
    this.name = "DiskFullError";
  }
}

/**
 * `err` said plainly when it is the disk being full: Node's own "ENOSPC: no space left on
 * device, write" names no file and says nothing of what was left (here: nothing, the temp is
 * gone), and the one from open names a /proc/self/fd path and a temp's name. Else `err` itself.
 */
export function diskFull(err: unknown, what: string): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (err instanceof DiskFullError || (code !== "ENOSPC" && code !== "EDQUOT")) return err;
  return new DiskFullError(what);
}

/** write(2) may take less than asked: loops until all of `data` is written. */
async function writeAll(fd: number, data: Buffer): Promise<void> {
  for (let off = 0; off < data.length;) {
    off += await new Promise<number>((resolve, reject) =>
      write(fd, data, off, data.length - off, null, (err, n) => (err ? reject(err) : resolve(n))),
    );
  }
}

/** The bytes of regular file `name` in `dir` (a link is not followed), or null; at most `max` bytes. */
export async function readChild(dir: number, name: string, max: number): Promise<Buffer | null> {
  let fd: number;
  try {
    fd = openSync(at(dir, name), READ_FLAGS | O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > max) return null;
    const { data, more } = await readUpTo(fd, max);
    return more ? null : data;
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `name` in `dir` atomically: a fresh temp file (O_EXCL | O_NOFOLLOW) written and
 * fsynced, renamed over the name (which replaces a link there, never follows it).
 */
export async function replaceIn(dir: number, name: string, data: Buffer | string, mode?: number): Promise<void> {
  const tmp = tempName(name, "tmp");
  const fd = openSync(at(dir, tmp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode ?? 0o644);
  try {
    try {
      await writeAll(fd, Buffer.from(data));
      if (mode !== undefined) fchmodSync(fd, mode);
      await fsyncFd(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(at(dir, tmp), at(dir, name));
  } catch (err) {
    try {
      unlinkSync(at(dir, tmp));
    } catch {
      /* already renamed or gone */
    }
    throw err;
  }
}
