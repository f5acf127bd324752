// workspace.create's `archive` source: the runner fetches the upload from the server that holds
// it (GET /api/uploads/<id> with the runner's own token), keeps it in a private temp file while
// it is extracted (archive.ts: every check, written through descriptors into the new workspace's
// staging folder), then removes it. A refused archive is a SourceError with the reason. The temp
// file is named by its runner's process mark: a runner killed -9 mid-download or mid-extraction
// leaves it (up to 512 MB in /tmp), and the next runner to start removes it once that process is
// gone (a live runner's, or another PID namespace's, is kept).
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { MARK_PATTERN, processMark, removeLeftoversOfDead } from "../pid-alive";
import { registerSource, SourceError } from "../root/sources";
import { ArchiveError, extractArchive } from "./archive";

/** The server's upload ceiling, plus room: a bigger body is not what the server stored. */
const MAX_DOWNLOAD_BYTES = 512 * 1024 ** 2 + 1024 ** 2;

const PREFIX = "quiver-upload-";
// The mark may be a bare pid: what runners before marks (and ones without /proc) named them.
const OWNED = new RegExp(`^${PREFIX}(${MARK_PATTERN})-[0-9a-f]{16}$`);

let config: { server: string; token: string } | undefined;

/** main.ts, at start: where the server is and the runner's token (the same as for /runner). */
export function configureArchiveSource(c: { server: string; token: string }): void {
  config = c;
  removeStaleDownloads();
}

/** Removes the downloads of runners that are gone: this user's regular files of that name only. */
export const removeStaleDownloads = (dir = tmpdir()) => removeLeftoversOfDead(dir, OWNED, "file");

export const uploadUrl = (server: string, uploadId: string) =>
  `${server.replace(/^ws/, "http").replace(/\/runner\/?$/, "")}/api/uploads/${encodeURIComponent(uploadId)}`;

registerSource("archive", async ({ source, staging, signal, progress }) => {
  if (!config) throw new SourceError("this runner was not told where to fetch uploads from");
  const res = await fetch(uploadUrl(config.server, source.uploadId), {
    headers: { authorization: `Bearer ${config.token}` },
    signal,
  }).catch((err: Error) => {
    throw new SourceError(`the uploaded archive could not be fetched from the server: ${err.message}`);
  });
  if (res.status === 404)
    throw new SourceError("the uploaded archive is gone (uploads are kept for a day); upload it again");
  if (!res.ok || !res.body) throw new SourceError(`the server refused the archive's download (HTTP ${res.status})`);
  const file = join(tmpdir(), `${PREFIX}${processMark() ?? process.pid}-${randomBytes(8).toString("hex")}`);
  try {
    let bytes = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        bytes += chunk.length;
        cb(
          bytes > MAX_DOWNLOAD_BYTES
            ? new SourceError("the archive the server sent is larger than any upload may be")
            : null,
          chunk,
        );
      },
    });
    await pipeline(
      Readable.fromWeb(res.body as import("node:stream/web").ReadableStream),
      cap,
      createWriteStream(file, { flags: "wx", mode: 0o600 }),
      { signal },
    );
    progress(`extracting the archive (${Math.ceil(bytes / 1024)} KB)`);
    const r = await extractArchive({ archivePath: file, destFd: staging.dirFd });
    progress(`extracted ${r.files} files in ${r.dirs} folders`);
  } catch (err) {
    if (err instanceof ArchiveError) throw new SourceError(`the archive was refused: ${err.message}`);
    throw err;
  } finally {
    await rm(file, { force: true });
  }
});
