// Blob contents out of the shadow a piece at a time: one `git cat-file --batch` answers every id
// asked, and each answer's bytes go to the caller's sink as they arrive (a file written with
// writeSync, so no more than one pipe read is ever held), never gathered in memory: a restore of
// thirty 9 MiB files holds what a restore of one small file does, and several restores at once
// (one per workspace: a workspace's run one at a time) hold a few pipe reads each. A restore
// stages every file it will write this way before it changes anything (stageBlobs).
import { closeSync, constants, openSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import { vanishedCover } from "../exec/host-sockets";
import { at, diskFull } from "../workspace/fs-at";
import { stageName } from "../workspace/fs-at/names";
import type { Walked } from "../workspace/fs-at/walk";
import { ShadowError, type ShadowRepo } from "./shadow";

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_NONBLOCK } = constants;

export interface BlobSink {
  /** The next blob (in the order asked) begins: `size` bytes follow through data(). */
  open(index: number, size: number): void;
  data(chunk: Buffer): void;
  /** All of its bytes were given. */
  close(index: number): void;
}

/** Streams blobs `ids` (in order; an id may repeat) into `sink`; rejects on a missing blob or git's failure. */
export async function catBlobs(shadow: ShadowRepo, ids: string[], sink: BlobSink): Promise<void> {
  if (ids.length === 0) return;
  // Once more with a fresh listing when a host socket vanished as the sandbox started
  // (host-sockets.ts): git never ran then, so nothing reached the sink.
  if ((await catOnce(shadow, ids, sink)) === "socket-race") await catOnce(shadow, ids, sink);
}

function catOnce(shadow: ShadowRepo, ids: string[], sink: BlobSink): Promise<"done" | "socket-race"> {
  return new Promise((resolve, reject) => {
    const child = shadow.spawn(["cat-file", "--batch"]);
    let answered = false;
    let failure: Error | undefined;
    const fail = (err: Error) => {
      failure ??= err;
      child.kill("SIGKILL");
    };
    let index = 0;
    let header: Buffer[] = [];
    /** Bytes left of the current blob; -1 while reading a header; 0 then the LF after a blob. */
    let left = -1;
    const err: Buffer[] = [];
    let errSize = 0;
    child.stdout.on("data", (chunk: Buffer) => {
      if (failure) return;
      answered = true;
      try {
        let pos = 0;
        while (pos < chunk.length) {
          if (left < 0) {
            const nl = chunk.indexOf(10, pos);
            header.push(chunk.subarray(pos, nl < 0 ? chunk.length : nl));
            if (nl < 0) return;
            pos = nl + 1;
            const line = Buffer.concat(header).toString();
            header = [];
            if (line.length > 200) throw new ShadowError(`unexpected cat-file answer: ${line.slice(0, 100)}`);
            const m = /^([0-9a-f]{40}) blob (\d+)$/.exec(line);
            if (!m || m[1] !== ids[index]) throw new ShadowError(`blob ${ids[index]} is missing from the checkpoints`);
            left = Number(m[2]);
            sink.open(index, left);
          } else if (left > 0) {
            const piece = chunk.subarray(pos, Math.min(chunk.length, pos + left));
            sink.data(piece);
            left -= piece.length;
            pos += piece.length;
          } else {
            // The LF git writes after each blob's bytes.
            pos += 1;
            sink.close(index);
            index += 1;
            left = -1;
          }
        }
      } catch (e) {
        fail(e as Error);
      }
    });
    child.stderr.on("data", (b: Buffer) => {
      if (errSize < 64 * 1024) err.push(b);
      errSize += b.length;
    });
    child.stdin.on("error", () => undefined);
    child.on("error", (e) => fail(e));
    child.on("close", (code) => {
      if (failure) return reject(failure);
      const stderr = Buffer.concat(err).toString();
      if (!answered && code !== 0 && vanishedCover(stderr, child.spawnargs)) return resolve("socket-race");
      if (index < ids.length)
        return reject(
          new ShadowError(`git cat-file failed: ${stderr.trim().split("\n").slice(-3).join(" ") || `exit ${code}`}`),
        );
      resolve("done");
    });
    // Ids are asked all at once (41 bytes each); git answers them in order, then exits.
    child.stdin.end(ids.join("\n") + "\n");
  });
}

/** A link's target is a path (PATH_MAX); a "link" blob past this is not one we made. */
const MAX_LINK_BYTES = 64 * 1024;

/** What a restore will write, read out of the shadow before anything in the workspace changes. */
export interface Staged {
  /** A regular file's content: a file of the stage folder, to rename into place. */
  file(path: string): string | undefined;
  /** A link's exact target. */
  link(path: string): string | undefined;
  /** The stage folder's descriptor (files are renamed out of it). */
  readonly dir: number;
  /** Removes the stage folder with whatever is left in it (the agent's commands may have put a
   *  tree of any depth there: it goes in slices, fs-at/remove.ts); never rejects. */
  dispose(): Promise<void>;
}

/**
 * Writes the content of every entry to a fresh folder at the workspace root (named with
 * TEMP_MARK, which the watcher ignores; under the workspace so each file then moves into place
 * by rename, on the same disk), through the workspace's descriptor, each file fsynced, 0600
 * until placed. Fails (the folder removed) without touching anything else of the workspace.
 * The fsyncs come after git's stream, off the event loop (syncStaged): one per file inside the
 * stream's handler held the runner's loop, which every workspace on it shares, for a millisecond
 * or more per file on a real disk.
 */
export async function stageBlobs(
  shadow: ShadowRepo,
  writes: { path: string; newBlob: string; newMode: string }[],
): Promise<Staged> {
  const files = shadow.workspace.files;
  // The limit is checked file by file inside git's stream, where nothing can be awaited.
  await files.writeGuard?.settle?.(0);
  const rel = stageName();
  files.mkdir(rel);
  let w: Walked | undefined;
  const dispose = async () => {
    w?.close();
    try {
      await files.removeTree(rel);
    } catch {
      /* gone already, or the workspace closed */
    }
  };
  const names = new Map<string, string>();
  const links = new Map<string, string>();
  let fd = -1;
  let link: Buffer[] | undefined;
  let linkSize = 0;
  try {
    w = files.walk(rel, { write: true, open: constants.O_RDONLY | constants.O_DIRECTORY });
    if (w.fd === undefined) throw new Error("the restore's stage folder is gone");
    const dir = w.fd;
    await catBlobs(
      shadow,
      writes.map((e) => e.newBlob),
      {
        open(i, size) {
          const e = writes[i];
          if (e.newMode === "120000") {
            if (size > MAX_LINK_BYTES) throw new ShadowError(`${e.path}: a link target of ${size} bytes`);
            link = [];
            linkSize = 0;
            return;
          }
          files.writeGuard?.before(size, e.path);
          fd = openSync(at(dir, String(i)), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
          names.set(e.path, String(i));
        },
        data(chunk) {
          if (link) {
            link.push(Buffer.from(chunk));
            linkSize += chunk.length;
            return;
          }
          for (let off = 0; off < chunk.length;) off += writeSync(fd, chunk, off, chunk.length - off);
        },
        close(i) {
          if (link) {
            links.set(writes[i].path, Buffer.concat(link, linkSize).toString("utf8"));
            link = undefined;
            return;
          }
          // Forgotten before it is closed: a close that fails has released the number all the
          // same, and the error path below must not close whatever took it meanwhile.
          const done = fd;
          fd = -1;
          closeSync(done);
        },
      },
    );
    await syncStaged(dir, [...names.values()]);
    return { file: (p) => names.get(p), link: (p) => links.get(p), dir, dispose };
  } catch (err) {
    if (fd >= 0) closeSync(fd);
    await dispose();
    throw diskFull(
      files.writeGuard?.failed(err) ?? err,
      `nothing was changed, there was no room to stage the ${writes.length} file(s) the restore writes`,
    );
  }
}

/**
 * fsyncs the stage folder's files, a few at a time, in libuv's pool. The agent's commands can
 * write in the workspace, so a staged file may have been swapped by now: it is opened without
 * following a link and without blocking (a FIFO would hold a pool thread, which every workspace
 * on the runner needs, until something wrote to it), and anything but a regular file fails the
 * restore before it changes anything. All have stopped when it settles: the caller then closes
 * `dir`, which the paths go through.
 */
export async function syncStaged(dir: number, staged: string[]): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async () => {
    try {
      while (next < staged.length && !failed) {
        const name = staged[next++];
        const file = await open(at(dir, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
        try {
          if (!(await file.stat()).isFile())
            throw new ShadowError(`the restore's staged file ${name} was replaced while it ran; nothing was changed`);
          await file.sync();
        } finally {
          await file.close();
        }
      }
    } catch (err) {
      failed = true;
      throw err;
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(SYNC_AT_ONCE, staged.length) }, worker));
  const refused = results.find((r) => r.status === "rejected");
  if (refused) throw refused.reason;
}

/** fsyncs in flight at once: libuv's pool has 4 threads, and other work waits behind them. */
const SYNC_AT_ONCE = 2;
