// The folders of a `--root DIR` runner: workspace W is DIR/W, reached only from DIR's directory
// descriptor with no-follow opens, so a workspace folder swapped for a link (or DIR's entries
// renamed by a racing process) never leads the runner elsewhere. Names starting with a dot are
// the runner's own (a workspace id cannot start with one):
//  - DIR/.new-W-<rand>: a workspace being filled by its source; renamed to DIR/W only when
//    complete, so a kill -9 mid-create leaves a leftover, never a half-made workspace;
//  - DIR/.gone-W-<rand>: a workspace being deleted; renamed away first (one atomic step), so a
//    kill -9 mid-delete leaves a leftover, never a half-deleted workspace;
//  - DIR/.limits/W: W's disk limit in bytes, replaced atomically (a stale one for a W that is
//    gone is harmless: the next create of W writes its own or removes it);
//  - DIR/.images/W.img: with `--disk-limits kernel`, W's file system, mounted on DIR/W (images.ts).
// Leftovers are removed when the runner starts.
import { randomBytes } from "node:crypto";
import { closeSync, constants, mkdirSync, openSync, realpathSync, renameSync, statfsSync } from "node:fs";
import { readdir, unlink } from "node:fs/promises";
import { WorkspaceId } from "../../server/protocol/workspace-ops";
import { at, fdPath } from "../workspace/fs-at";
import { readChild, replaceIn } from "../workspace/fs-at/fd";
import { removeEntrySliced } from "../workspace/fs-at/remove";
import { bytesUnder } from "../workspace/fs-at/usage";
import { unmountLeftover, WorkspaceImages } from "./images";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

export class StoreError extends Error {}

export class WorkspaceStore {
  private constructor(
    /** DIR's real path. */
    readonly path: string,
    private readonly fd: number,
    /** With `--disk-limits kernel`: each limited workspace's image. */
    private readonly images?: WorkspaceImages,
  ) {}

  /** Opens DIR (made, mode 0700, when missing) and removes what a killed create or delete left. */
  static async open(dir: string, opts: { kernelLimits?: boolean } = {}): Promise<WorkspaceStore> {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new StoreError(`--root ${dir} cannot be made: ${(err as Error).message}`);
    }
    let fd: number;
    try {
      fd = openSync(dir, O_RDONLY | O_DIRECTORY);
    } catch (err) {
      throw new StoreError(`--root ${dir} is not a readable folder: ${(err as Error).message}`);
    }
    const path = realpathSync(fdPath(fd));
    const store = new WorkspaceStore(path, fd, opts.kernelLimits ? new WorkspaceImages(path) : undefined);
    for (const name of await readdir(fdPath(fd))) {
      if (name.startsWith(".new-") || name.startsWith(".gone-")) {
        unmountLeftover(`${path}/${name}`);
        await removeEntrySliced(fd, name).catch(() => undefined);
      }
    }
    store.images?.sweep(await store.list());
    return store;
  }

  /** The path of workspace `id` (for children's binds and messages; the runner itself uses descriptors). */
  pathOf(id: WorkspaceId): string {
    return `${this.path}/${WorkspaceId.parse(id)}`;
  }

  /** Ids of the workspaces present (folders with a valid id; anything else under DIR is ignored). */
  async list(): Promise<string[]> {
    const out: string[] = [];
    for (const e of await readdir(fdPath(this.fd), { withFileTypes: true })) {
      if (e.isDirectory() && WorkspaceId.safeParse(e.name).success) out.push(e.name);
    }
    return out.sort();
  }

  /** Opens workspace `id` without following a link; undefined when it does not exist (or is not a
   *  folder). A workspace with an image is opened on it, mounted first when it is not. */
  openDir(id: WorkspaceId): number | undefined {
    try {
      this.images?.ensureMounted(id);
    } catch (err) {
      throw new StoreError(`workspace ${id}'s disk image could not be mounted: ${(err as Error).message}`);
    }
    try {
      return openSync(at(this.fd, WorkspaceId.parse(id)), DIR_FLAGS);
    } catch (err) {
      if (["ENOENT", "ENOTDIR", "ELOOP"].includes(code(err) ?? "")) return undefined;
      throw err;
    }
  }

  exists(id: WorkspaceId): boolean {
    const fd = this.openDir(id);
    if (fd === undefined) return false;
    closeSync(fd);
    return true;
  }

  /**
   * Makes workspace `id`: an empty staging folder is filled by `fill` (given its descriptor and
   * its real path, for a child process's cwd or bind), then renamed into place. Fails when `id`
   * exists; a failed fill leaves nothing.
   */
  async create(
    id: WorkspaceId,
    fill: (staging: { dirFd: number; path: string }) => Promise<void>,
    limitBytes?: number,
  ): Promise<void> {
    WorkspaceId.parse(id);
    if (this.exists(id)) throw new StoreError(`workspace ${id} already exists`);
    const staging = `.new-${id}-${randomBytes(6).toString("hex")}`;
    mkdirSync(at(this.fd, staging), { mode: 0o755 });
    let image: string | undefined;
    try {
      // With an image, the fill itself is held to the limit by the kernel.
      if (this.images && limitBytes) image = this.mountNew(staging, limitBytes);
      const dirFd = openSync(at(this.fd, staging), DIR_FLAGS);
      try {
        await fill({ dirFd, path: `${this.path}/${staging}` });
      } finally {
        closeSync(dirFd);
      }
      // rename(2) would replace an empty folder made meanwhile: checked again right before.
      if (this.exists(id)) throw new StoreError(`workspace ${id} already exists`);
      // A mount point cannot be renamed: the filled image is let go, named W's, and mounted on W.
      if (image) this.images!.settle(staging, image, id, limitBytes!);
      renameSync(at(this.fd, staging), at(this.fd, id));
      if (image) this.images!.ensureMounted(id);
    } catch (err) {
      if (image && !this.exists(id)) this.images!.abandon(staging, image);
      await removeEntrySliced(this.fd, staging).catch(() => undefined);
      throw err;
    }
  }

  private mountNew(staging: string, limitBytes: number): string {
    try {
      return this.images!.mountForFill(staging, limitBytes);
    } catch (err) {
      throw new StoreError(`the workspace's disk image could not be made: ${(err as Error).message}`);
    }
  }

  /** Removes workspace `id` and all it holds, following no link; false when it did not exist. */
  async delete(id: WorkspaceId): Promise<boolean> {
    const gone = `.gone-${WorkspaceId.parse(id)}-${randomBytes(6).toString("hex")}`;
    // A mount point cannot be renamed; its processes were stopped before (workspaces.ts).
    this.images?.unmount(id);
    try {
      // Not followed: a link named `id` is renamed itself, then unlinked.
      renameSync(at(this.fd, id), at(this.fd, gone));
    } catch (err) {
      if (code(err) === "ENOENT") {
        this.images?.remove(id);
        return false;
      }
      throw err;
    }
    await removeEntrySliced(this.fd, gone);
    this.images?.remove(id);
    return true;
  }

  /** Grows workspace `id`'s image (if it has one) to hold `limitBytes`; "pending" when it grows
   *  only at its next mount (images.ts). */
  growImage(id: WorkspaceId, limitBytes: number): "grown" | "pending" {
    try {
      return this.images?.grow(id, limitBytes) ?? "grown";
    } catch (err) {
      throw new StoreError(`workspace ${id}'s disk image could not grow: ${(err as Error).message}`);
    }
  }

  /** Whether the kernel holds workspace `id` to `limitBytes` (its image was made for it). */
  kernelHolds(id: WorkspaceId, limitBytes: number): boolean {
    return this.images?.holds(id, limitBytes) ?? false;
  }

  /** Workspace `id`'s disk limit, or undefined when it has none. */
  async limitOf(id: WorkspaceId): Promise<number | undefined> {
    const dir = this.limitsDir(false);
    if (dir === undefined) return undefined;
    try {
      const n = Number((await readChild(dir, WorkspaceId.parse(id), 64))?.toString().trim());
      return Number.isSafeInteger(n) && n > 0 ? n : undefined;
    } finally {
      closeSync(dir);
    }
  }

  /** Sets (a number) or lifts (undefined) workspace `id`'s disk limit. */
  async setLimit(id: WorkspaceId, bytes: number | undefined): Promise<void> {
    const dir = this.limitsDir(bytes !== undefined);
    if (dir === undefined) return;
    try {
      if (bytes !== undefined) {
        await replaceIn(dir, WorkspaceId.parse(id), `${bytes}\n`, 0o600);
      } else {
        try {
          await unlink(at(dir, WorkspaceId.parse(id)));
        } catch (err) {
          if (code(err) !== "ENOENT") throw err;
        }
      }
    } finally {
      closeSync(dir);
    }
  }

  private limitsDir(make: boolean): number | undefined {
    if (make) {
      try {
        mkdirSync(at(this.fd, ".limits"), { mode: 0o700 });
      } catch (err) {
        if (code(err) !== "EEXIST") throw err;
      }
    }
    try {
      return openSync(at(this.fd, ".limits"), DIR_FLAGS);
    } catch (err) {
      if (code(err) === "ENOENT") return undefined;
      throw err;
    }
  }

  /** Bytes of the files under workspace `id` (allocated blocks, links not followed, each inode once). */
  async usage(id: WorkspaceId): Promise<number> {
    const fd = this.openDir(id);
    if (fd === undefined) throw new StoreError(`workspace ${id} does not exist`);
    try {
      return await bytesUnder(fd);
    } finally {
      closeSync(fd);
    }
  }

  freeDiskBytes(): number {
    const s = statfsSync(fdPath(this.fd));
    return Number(s.bavail) * Number(s.bsize);
  }

  /** Lets go of DIR, and of the workspaces' images (their processes are stopped by then). */
  close(): void {
    this.images?.unmountAll();
    closeSync(this.fd);
  }
}

/** Bytes under the folder at `path` (the default workspace's descriptor path), as usage() counts them. */
export async function folderBytes(path: string): Promise<number> {
  const fd = openSync(path, O_RDONLY | O_DIRECTORY);
  try {
    return await bytesUnder(fd);
  } finally {
    closeSync(fd);
  }
}
