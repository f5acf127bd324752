// Uploaded project archives, kept in the data folder under an id until a runner fetches them
// for workspace.create ({ kind: "archive", uploadId }). An upload is streamed to `<id>.part`
// (never held in memory), stopped at the size ceiling, checked to be a .zip / .tar.gz / .tar by
// its first bytes, fsynced and only then renamed to `<id>.bin` beside its `<id>.json` (who sent
// it, its name and size). A kill -9 or a full disk mid-upload leaves a `.part` the next start
// removes; uploads older than a day are removed too, unless a project was made from one: each of
// its people's workspaces is made from it when they first open the project, maybe months later,
// so it is kept (an empty `<id>.kept` beside it) until the project is deleted.
// Each person may keep at most `quotaBytes` (default twice the ceiling) in at most `quotaCount`
// uploads at once, counting the uploads still streaming in and those their projects keep, so a
// member cannot fill the disk.
import { randomBytes } from "node:crypto";
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  type ReadStream,
} from "node:fs";
import { open, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import type { Actor } from "./types";

export const DEFAULT_UPLOAD_MAX_BYTES = 512 * 1024 ** 2;
/** Uploads one person may keep at once (kept and still arriving). */
export const DEFAULT_UPLOAD_QUOTA_COUNT = 20;
const KEEP_MS = 24 * 3600_000;
const UPLOAD_ID = /^u-[0-9a-f]{24}$/;

export class UploadError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 413 | 415 | 429 | 507,
    message: string,
    /** With 429: seconds until enough of the person's uploads have expired to make room. */
    readonly retryAfterS?: number,
  ) {
    super(message);
    this.name = "UploadError";
  }
}

export interface UploadMeta {
  id: string;
  orgId: string;
  userId: string;
  name: string;
  bytes: number;
  format: "zip" | "tar.gz" | "tar";
  createdAt: string;
}

const DISK_FULL = "the server's disk is full; the upload was not kept";
const diskFull = (err: unknown) => ["ENOSPC", "EDQUOT"].includes((err as NodeJS.ErrnoException)?.code ?? "");

const hours = (s: number) => (s >= 5400 ? `${Math.round(s / 3600)} h` : `${Math.max(1, Math.round(s / 60))} min`);
const mb = (n: number) => (n >= 1024 ** 2 ? `${Math.round(n / 1024 ** 2)} MB` : `${Math.ceil(n / 1024)} KB`);

function formatOf(head: Buffer): UploadMeta["format"] | null {
  if (head.length >= 4 && (head.readUInt32LE(0) === 0x04034b50 || head.readUInt32LE(0) === 0x06054b50)) return "zip";
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return "tar.gz";
  if (head.length >= 262 && head.toString("latin1", 257, 262) === "ustar") return "tar";
  return null;
}

/** A file name for display: its last path part, printable, at most 200 characters. */
const cleanName = (name: string) =>
  (name.split(/[\\/]/).pop() ?? "").replace(/[\x00-\x1f\x7f]/g, "").slice(0, 200) || "archive";

export function createUploads(opts: {
  dataDir: string;
  maxBytes?: number;
  /** What one person may keep at once, in bytes (default: twice `maxBytes`) and in uploads. */
  quotaBytes?: number;
  quotaCount?: number;
  now?: () => number;
}) {
  const dir = join(opts.dataDir, "uploads");
  const maxBytes = opts.maxBytes ?? DEFAULT_UPLOAD_MAX_BYTES;
  const quotaBytes = opts.quotaBytes ?? 2 * maxBytes;
  const quotaCount = opts.quotaCount ?? DEFAULT_UPLOAD_QUOTA_COUNT;
  const now = opts.now ?? Date.now;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = (id: string, ext: "bin" | "json" | "part" | "kept") => join(dir, `${id}.${ext}`);
  const isKept = (id: string) => existsSync(path(id, "kept"));

  /**
   * Per person (user id, across orgs: it is one disk): the bytes of each kept upload, and of each
   * one streaming in (its declared length, or what has arrived when more). Held in memory so that
   * the check and the count of a chunk happen in one synchronous step: two parallel uploads cannot
   * both pass a check made before either was counted. Filled from the metas at start.
   */
  const held = new Map<string, { kept: Map<string, number>; arriving: Map<string, number> }>();
  const heldBy = (userId: string) => {
    let h = held.get(userId);
    if (!h) held.set(userId, (h = { kept: new Map(), arriving: new Map() }));
    return h;
  };
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

  /** Removes what a killed upload left and uploads past their day that no project keeps. */
  function sweep(): string[] {
    const removed: string[] = [];
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      try {
        if (
          name.endsWith(".part") ||
          (!isKept(name.replace(/\.[a-z]+$/, "")) && now() - statSync(full).mtimeMs > KEEP_MS)
        ) {
          unlinkSync(full);
          removed.push(name);
        }
      } catch {
        /* gone meanwhile */
      }
    }
    return removed;
  }
  sweep();
  for (const name of readdirSync(dir)) {
    const id = name.slice(0, -".json".length);
    if (!name.endsWith(".json") || !UPLOAD_ID.test(id)) continue;
    try {
      const m = JSON.parse(readFileSync(join(dir, name), "utf8")) as UploadMeta;
      // A meta without its .bin is what a crash between the two left: no upload, nothing to count.
      if (typeof m.userId === "string" && typeof m.bytes === "number" && existsSync(path(id, "bin")))
        heldBy(m.userId).kept.set(id, m.bytes);
    } catch {
      /* unreadable: not counted, and swept with the rest after a day */
    }
  }

  /**
   * Forgets the person's uploads that are gone, and removes those past their day: without this,
   * a server up for weeks would hold them until its next start and the quota would never free.
   * Returns when each remaining one expires, oldest first (those a project keeps never do).
   */
  function expire(h: { kept: Map<string, number> }): { bytes: number; expiresAt: number }[] {
    const left: { bytes: number; expiresAt: number }[] = [];
    for (const [id, bytes] of h.kept) {
      if (isKept(id)) continue;
      let mtimeMs: number;
      try {
        mtimeMs = statSync(path(id, "bin")).mtimeMs;
      } catch {
        h.kept.delete(id);
        continue;
      }
      if (now() - mtimeMs > KEEP_MS) {
        for (const ext of ["bin", "json"] as const)
          try {
            unlinkSync(path(id, ext));
          } catch {
            /* gone meanwhile */
          }
        h.kept.delete(id);
      } else left.push({ bytes, expiresAt: mtimeMs + KEEP_MS });
    }
    return left.sort((a, b) => a.expiresAt - b.expiresAt);
  }

  /**
   * 429, not 413: this upload is not too large in itself (that is 413), the person has too much
   * kept for now; waiting (uploads expire after a day) or reusing what is there helps, and
   * Retry-After says when enough has expired to make room for `bytes` more.
   */
  function overQuota(h: ReturnType<typeof heldBy>, what: string, bytes: number): UploadError {
    const kept = expire(h);
    let used = sum(h.kept) + sum(h.arriving);
    let count = h.kept.size + h.arriving.size;
    let retryAfterS: number | undefined;
    for (const k of kept) {
      used -= k.bytes;
      count--;
      if (used + bytes <= quotaBytes && count < quotaCount) {
        retryAfterS = Math.max(1, Math.ceil((k.expiresAt - now()) / 1000));
        break;
      }
    }
    const soon = retryAfterS === undefined ? "" : `, so room frees in about ${hours(retryAfterS)}`;
    return new UploadError(
      429,
      `${what}. Wait for your older uploads to expire (each is kept for a day${soon}), make projects from the archives you have already uploaded, or delete projects made from archives you no longer need (a project keeps its archive)`,
      retryAfterS,
    );
  }

  async function remove(id: string): Promise<void> {
    if (!UPLOAD_ID.test(id)) return;
    for (const h of held.values()) h.kept.delete(id);
    await unlink(path(id, "bin")).catch(() => {});
    await unlink(path(id, "json")).catch(() => {});
    await unlink(path(id, "kept")).catch(() => {});
  }

  async function meta(id: string): Promise<UploadMeta | null> {
    if (!UPLOAD_ID.test(id)) return null;
    try {
      return JSON.parse(await readFile(path(id, "json"), "utf8")) as UploadMeta;
    } catch {
      return null;
    }
  }

  return {
    maxBytes,
    sweep,
    meta,

    /** Streams the request's body into a new upload of `actor`'s; refuses past the ceiling or the quota, or what is not an archive. */
    async receive(req: IncomingMessage, actor: Actor, name: string): Promise<UploadMeta> {
      const declared = Number(req.headers["content-length"]);
      if (Number.isFinite(declared) && declared > maxBytes)
        throw new UploadError(413, `the archive is ${mb(declared)}; uploads are limited to ${mb(maxBytes)}`);
      const id = `u-${randomBytes(12).toString("hex")}`;
      // From the check to the reservation nothing awaits, so parallel uploads are counted in turn.
      const h = heldBy(actor.userId);
      expire(h);
      const reserved = Number.isFinite(declared) && declared > 0 ? declared : 0;
      const others = sum(h.kept) + sum(h.arriving);
      if (h.kept.size + h.arriving.size >= quotaCount)
        throw overQuota(
          h,
          `you already have ${quotaCount} uploads kept on the server, the most one person may keep`,
          0,
        );
      if (others + reserved > quotaBytes)
        throw overQuota(
          h,
          `this archive (${mb(reserved)}) and the uploads you already have on the server (${mb(others)}) pass the ${mb(quotaBytes)} one person may keep`,
          reserved,
        );
      h.arriving.set(id, reserved);
      const part = path(id, "part");
      const out = createWriteStream(part, { flags: "wx", mode: 0o600 });
      let bytes = 0;
      let head = Buffer.alloc(0);
      try {
        await new Promise<void>((resolve, reject) => {
          // Once refused, a chunk still coming must not count the upload as arriving again.
          let stopped = false;
          const stop = (err: UploadError) => {
            stopped = true;
            req.pause();
            reject(err);
          };
          req.on("data", (chunk: Buffer) => {
            if (stopped) return;
            bytes += chunk.length;
            if (head.length < 512) head = Buffer.concat([head, chunk.subarray(0, 512 - head.length)]);
            if (bytes > maxBytes)
              return stop(new UploadError(413, `the archive is larger than ${mb(maxBytes)}, the ceiling for uploads`));
            // A body without a length is counted as it arrives, and stopped when the person's total would pass.
            if (bytes > (h.arriving.get(id) ?? 0)) {
              h.arriving.set(id, bytes);
              const total = sum(h.kept) + sum(h.arriving);
              if (total > quotaBytes) {
                h.arriving.delete(id);
                return stop(
                  overQuota(
                    h,
                    `this archive (${mb(bytes)} so far) and your other uploads on the server (${mb(total - bytes)}) pass the ${mb(quotaBytes)} one person may keep`,
                    bytes,
                  ),
                );
              }
            }
            if (!out.write(chunk)) req.pause();
          });
          out.on("drain", () => req.resume());
          out.on("error", (err: NodeJS.ErrnoException) =>
            reject(diskFull(err) ? new UploadError(507, DISK_FULL) : err),
          );
          req.on("error", reject);
          req.on("aborted", () => reject(new UploadError(400, "the upload was interrupted")));
          req.on("end", resolve);
        });
        const format = formatOf(head);
        if (!format) throw new UploadError(415, "the upload is not a .zip, .tar.gz, .tgz or .tar archive");
        await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
        const fh = await open(part, "r");
        await fh.sync().finally(() => fh.close());
        const record: UploadMeta = {
          id,
          orgId: actor.orgId,
          userId: actor.userId,
          name: cleanName(name),
          bytes,
          format,
          createdAt: new Date(now()).toISOString(),
        };
        await writeFile(path(id, "json"), JSON.stringify(record), { mode: 0o600 });
        await rename(part, path(id, "bin"));
        h.kept.set(id, bytes);
        return record;
      } catch (err) {
        out.destroy();
        await unlink(part).catch(() => {});
        await unlink(path(id, "json")).catch(() => {});
        // The disk may fill after the body is in (its fsync, or the record beside it).
        throw diskFull(err) ? new UploadError(507, DISK_FULL) : err;
      } finally {
        h.arriving.delete(id);
      }
    },

    /** The upload, when `actor` sent it (a project is made only from one's own uploads). */
    async claim(id: string, actor: Actor): Promise<UploadMeta> {
      const m = await meta(id);
      if (!m) throw new UploadError(404, "no such upload (uploads are kept for a day)");
      if (m.userId !== actor.userId || m.orgId !== actor.orgId)
        throw new UploadError(403, "this upload is someone else's");
      return m;
    },

    /** The archive's bytes, for a runner. */
    async read(id: string): Promise<{ meta: UploadMeta; stream: ReadStream } | null> {
      const m = await meta(id);
      if (!m) return null;
      try {
        return { meta: m, stream: createReadStream(path(id, "bin")) };
      } catch {
        return null;
      }
    },

    remove,

    /** Keeps the upload past its day, for a project made from it (until `release`). Throws when
     *  it is gone or the mark cannot be written (a full disk): the project would lose its files. */
    async keep(id: string): Promise<void> {
      if (!(await meta(id)) || !existsSync(path(id, "bin"))) throw new UploadError(404, "no such upload");
      await writeFile(path(id, "kept"), "", { flag: "w", mode: 0o600 }).catch((err) => {
        throw diskFull(err) ? new UploadError(507, DISK_FULL) : err;
      });
    },

    /** No project keeps it any more: it goes now when past its day, like any other upload. */
    async release(id: string): Promise<void> {
      if (!UPLOAD_ID.test(id)) return;
      await unlink(path(id, "kept")).catch(() => {});
      const at = await stat(path(id, "bin")).catch(() => null);
      if (at && now() - at.mtimeMs > KEEP_MS) await remove(id);
    },

    /** The uploads a project keeps (checked against the projects at start). */
    kept(): string[] {
      return readdirSync(dir)
        .filter((n) => n.endsWith(".kept"))
        .map((n) => n.slice(0, -".kept".length))
        .filter((id) => UPLOAD_ID.test(id));
    },
  };
}

export type Uploads = ReturnType<typeof createUploads>;
