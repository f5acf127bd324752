// The kernel's hold on `--root` workspaces' disk limits (`--disk-limits kernel`): a workspace
// made with a limit is an ext4 file system of its own, DIR/.images/W.img, loop-mounted on DIR/W
// (workspace/disk-image.ts). Writes past it fail with ENOSPC for everyone, commands included,
// with no window, instead of being measured after the fact (workspace/disk-limit.ts still names
// the limit in messages). The images live in DIR, which no sandbox shows, so nothing in a
// workspace can reach or grow its own.
//
// What a `kill -9` at any step leaves, and what the next start does with it (store.ts):
//  - during a create, the image is `.images/.new-…` mounted on the staging folder `.new-…`: both
//    are removed (the create was never answered);
//  - after the image is renamed to W.img and before DIR/W exists: an image with no folder is
//    removed; once DIR/W exists, its image is mounted when W is first opened;
//  - during a delete, W is unmounted first, then renamed away, then its image removed: a folder
//    with its image is a workspace still (the delete was never answered), an image alone is removed.
// A mount outlives the runner (it is the host's); a new runner finds it mounted and uses it.
// DIR/.images/W.limit says which limit W's file system was made or last grown for: the kernel is
// the limit's only while the two agree (a lower limit is measured; a raise grows the image first).
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { WorkspaceId } from "../../server/protocol/workspace-ops";
import { growImage, growImageOffline, isMounted, loopsOf, mountImage, unmount } from "../workspace/disk-image";

export class WorkspaceImages {
  private readonly dir: string;

  /** `root`: DIR's real path. */
  constructor(private readonly root: string) {
    this.dir = `${root}/.images`;
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  imageOf(id: string): string {
    return `${this.dir}/${WorkspaceId.parse(id)}.img`;
  }

  has(id: string): boolean {
    return existsSync(this.imageOf(id));
  }

  /** Mounts a new image holding `limitBytes` on the empty staging folder; returns the image's path. */
  mountForFill(stagingName: string, limitBytes: number): string {
    const image = `${this.dir}/${stagingName}.img`;
    mountImage(`${this.root}/${stagingName}`, image, limitBytes);
    return image;
  }

  /** After a fill: the staging folder unmounted and its image named W's, made for `limitBytes`. */
  settle(stagingName: string, image: string, id: string, limitBytes: number): void {
    unmount(`${this.root}/${stagingName}`);
    renameSync(image, this.imageOf(id));
    this.setMadeFor(id, limitBytes);
  }

  /** The limit W's file system was made or last grown for (undefined: not known, or no image). */
  madeFor(id: string): number | undefined {
    return this.read(`${WorkspaceId.parse(id)}.limit`);
  }

  private setMadeFor(id: string, limitBytes: number): void {
    this.write(`${WorkspaceId.parse(id)}.limit`, limitBytes);
  }

  private read(name: string): number | undefined {
    try {
      const n = Number(readFileSync(`${this.dir}/${name}`, "utf8").trim());
      return Number.isSafeInteger(n) && n > 0 ? n : undefined;
    } catch {
      return undefined;
    }
  }

  private write(name: string, bytes: number): void {
    writeFileSync(`${this.dir}/${name}.tmp`, `${bytes}\n`, { mode: 0o600 });
    renameSync(`${this.dir}/${name}.tmp`, `${this.dir}/${name}`);
  }

  /** A fill that failed: its mount and image go. */
  abandon(stagingName: string, image: string): void {
    unmount(`${this.root}/${stagingName}`);
    rmSync(image, { force: true });
  }

  /** W's image on DIR/W, unless it is there already or W has none. */
  ensureMounted(id: string): void {
    const path = `${this.root}/${WorkspaceId.parse(id)}`;
    if (!this.has(id) || isMounted(path)) return;
    this.growPending(id);
    // The image exists: mountImage only mounts it (the limit is for a new one).
    mountImage(path, this.imageOf(id), 0);
  }

  /** Lets go of W's mount (the runner stopping, or before a delete renames the folder). */
  unmount(id: string): void {
    unmount(`${this.root}/${WorkspaceId.parse(id)}`);
  }

  remove(id: string): void {
    rmSync(this.imageOf(id), { force: true });
    for (const end of [".limit", ".want"]) rmSync(`${this.dir}/${WorkspaceId.parse(id)}${end}`, { force: true });
  }

  /** Whether the kernel holds W to exactly `limitBytes` (its image was made or grown for it). */
  holds(id: string, limitBytes: number): boolean {
    return this.has(id) && this.madeFor(id) === limitBytes;
  }

  /**
   * Grows W's image to hold `limitBytes`: at once when it is not mounted, or mounted and the
   * kernel lets this process resize it in use (CAP_SYS_RESOURCE, which a container may lack).
   * Otherwise "pending": the size is kept as wanted and the image grows before its next mount
   * (ensureMounted), the old size holding until then. A lower limit leaves the image as it is
   * (ext4 cannot shrink in use; the measured limit holds the lower one).
   */
  grow(id: string, limitBytes: number): "grown" | "pending" {
    if (!this.has(id) || (this.madeFor(id) ?? 0) >= limitBytes) return "grown";
    const path = `${this.root}/${WorkspaceId.parse(id)}`;
    if (isMounted(path)) {
      try {
        growImage(path, this.imageOf(id), limitBytes);
      } catch {
        this.write(`${WorkspaceId.parse(id)}.want`, limitBytes);
        return "pending";
      }
    } else growImageOffline(this.imageOf(id), limitBytes);
    this.setMadeFor(id, limitBytes);
    return "grown";
  }

  /** A grow left pending, done now if the image is free (before a mount). */
  private growPending(id: string): void {
    const want = this.read(`${WorkspaceId.parse(id)}.want`);
    if (!want || want <= (this.madeFor(id) ?? 0) || loopsOf(this.imageOf(id)).length > 0) return;
    growImageOffline(this.imageOf(id), want);
    this.setMadeFor(id, want);
    rmSync(`${this.dir}/${id}.want`, { force: true });
  }

  /** Unmounts every workspace's image (the runner stopping cleanly). */
  unmountAll(): void {
    for (const name of readdirSync(this.dir)) {
      const id = name.replace(/\.img$/, "");
      if (name.endsWith(".img") && WorkspaceId.safeParse(id).success) {
        try {
          this.unmount(id);
        } catch {
          /* left mounted: the next runner uses it as it is */
        }
      }
    }
  }

  /** At start: what a killed create or delete left (see above). `present`: the workspace folders. */
  sweep(present: string[]): void {
    for (const name of readdirSync(this.dir)) {
      const id = name.replace(/\.(img|limit|want)(\.tmp)?$/, "");
      const leftover =
        name.startsWith(".new-") || name.startsWith(".gone-") || name.endsWith(".tmp") || !present.includes(id);
      if (leftover) rmSync(`${this.dir}/${name}`, { force: true });
    }
  }
}

/** Unmounts a staging folder a killed create left mounted, so it can be removed. */
export function unmountLeftover(path: string): void {
  try {
    unmount(path);
  } catch {
    /* not a mount, or already gone */
  }
}
