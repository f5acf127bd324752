// Uploaded project archives, kept in the data folder under an id until a runner fetches them
// for workspace.create ({ kind: "archive", uploadId }). An upload is streamed to `<id>.part`
// (never held in memory), stopped at the size ceiling, checked to be a .zip / .tar.gz / .tar by
// its first bytes, fsynced and only then renamed to `<id>.bin` beside its `<id>.json` (who sent
// it, its name and size). A kill -9 or a full disk mid-upload leaves a `.part` the next start
// removes; uploads older than a day are removed too (a project made from one has its files by then).
import { randomBytes } from "node:crypto";
import {
  createReadStream,
  createWriteStream,
  mkdirSync,
  readdirSync,
  statSync,
  unlinkSync,
  type ReadStream,
} from "node:fs";
import { open, readFile, rename, unlink, writeFile } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import type { Actor } from "./types";

export const DEFAULT_UPLOAD_MAX_BYTES = 512 * 1024 ** 2;
const KEEP_MS = 24 * 3600_000;
const UPLOAD_ID = /^u-[0-9a-f]{24}$/;

export class UploadError extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 413 | 415 | 507,
    message: string,
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

export function createUploads(opts: { dataDir: string; maxBytes?: number; now?: () => number }) {
  const dir = join(opts.dataDir, "uploads");
  const maxBytes = opts.maxBytes ?? DEFAULT_UPLOAD_MAX_BYTES;
  const now = opts.now ?? Date.now;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = (id: string, ext: "bin" | "json" | "part") => join(dir, `${id}.${ext}`);

  /** Removes what a killed upload left and uploads past their day. */
  function sweep(): string[] {
    const removed: string[] = [];
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      try {
        if (name.endsWith(".part") || now() - statSync(full).mtimeMs > KEEP_MS) {
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

    /** Streams the request's body into a new upload of `actor`'s; refuses past the ceiling or what is not an archive. */
    async receive(req: IncomingMessage, actor: Actor, name: string): Promise<UploadMeta> {
      const declared = Number(req.headers["content-length"]);
      if (Number.isFinite(declared) && declared > maxBytes)
        throw new UploadError(413, `the archive is ${mb(declared)}; uploads are limited to ${mb(maxBytes)}`);
      const id = `u-${randomBytes(12).toString("hex")}`;
      const part = path(id, "part");
      const out = createWriteStream(part, { flags: "wx", mode: 0o600 });
      let bytes = 0;
      let head = Buffer.alloc(0);
      try {
        await new Promise<void>((resolve, reject) => {
          req.on("data", (chunk: Buffer) => {
            bytes += chunk.length;
            if (head.length < 512) head = Buffer.concat([head, chunk.subarray(0, 512 - head.length)]);
            if (bytes > maxBytes) {
              req.pause();
              return reject(
                new UploadError(413, `the archive is larger than ${mb(maxBytes)}, the ceiling for uploads`),
              );
            }
            if (!out.write(chunk)) req.pause();
          });
          out.on("drain", () => req.resume());
          out.on("error", (err: NodeJS.ErrnoException) =>
            reject(
              err.code === "ENOSPC" ? new UploadError(507, "the server's disk is full; the upload was not kept") : err,
            ),
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
        return record;
      } catch (err) {
        out.destroy();
        await unlink(part).catch(() => {});
        await unlink(path(id, "json")).catch(() => {});
        throw err;
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

    async remove(id: string): Promise<void> {
      if (!UPLOAD_ID.test(id)) return;
      await unlink(path(id, "bin")).catch(() => {});
      await unlink(path(id, "json")).catch(() => {});
    },
  };
}

export type Uploads = ReturnType<typeof createUploads>;
