// The lstat of every path a snapshot lists (snapshot.ts), for a work tree of 50,000 files,
// without holding the runner's event loop: the work is cut into slices of a few milliseconds
// (fs-at/slices.ts), and each folder is opened once for all of its files instead of every path
// being walked from the root again. Folders are opened component by component with O_NOFOLLOW
// from the one above, starting from a descriptor of the root of our own (the workspace may be
// closed during a pause, its number then another file's). A path is found only when every
// folder above it is a real folder, not a link: git stores nothing under a link, and a link the
// agent put in place of a folder is never followed. Anything that cannot be read counts as absent.
import { closeSync, constants, lstatSync, openSync, type Stats } from "node:fs";
import { at, type WorkspaceFs } from "../workspace/fs-at";
import { Slices } from "../workspace/fs-at/slices";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;

/** Folder levels whose descriptors are kept for the folders after (a deeper one is opened for its own files only). */
const MAX_HELD = 32;

/** The lstat of each of `paths` (workspace-relative files, no trailing slash) that exists under real folders. */
export async function listedStats(files: WorkspaceFs, paths: Iterable<string>): Promise<Map<string, Stats>> {
  const byDir = new Map<string, string[]>();
  for (const path of paths) {
    const cut = path.lastIndexOf("/");
    const dir = cut < 0 ? "" : path.slice(0, cut);
    let names = byDir.get(dir);
    if (!names) byDir.set(dir, (names = []));
    names.push(path.slice(cut + 1));
  }
  // Component-wise order ("/" before any other character): a folder's subfolders come right
  // after it, so each descriptor on the way is opened once.
  const dirs = [...byDir.keys()].map((d) => [d.replaceAll("/", "\0"), d] as const);
  dirs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

  const out = new Map<string, Stats>();
  const slices = new Slices();
  const root = files.walk("", { open: O_RDONLY | O_DIRECTORY });
  /** The folders open now, from the root down; fd undefined: not a real folder (nor anything below it). */
  const held: { name: string; fd: number | undefined }[] = [];
  /** A folder below MAX_HELD levels, open for its own files only. */
  let deep: number | undefined;
  const closeDeep = () => {
    // Forgotten before it is closed: a close that fails has released the number all the same.
    const fd = deep;
    deep = undefined;
    if (fd !== undefined) closeSync(fd);
  };
  try {
    const rootFd = root.fd!;
    for (const [, dir] of dirs) {
      const comps = dir === "" ? [] : dir.split("/");
      const kept = Math.min(comps.length, MAX_HELD);
      let same = 0;
      while (same < held.length && same < kept && held[same].name === comps[same]) same++;
      while (held.length > same) {
        const fd = held.pop()!.fd;
        if (fd !== undefined) closeSync(fd);
      }
      for (let i = same; i < kept; i++) {
        const parent = i === 0 ? rootFd : held[i - 1].fd;
        held.push({ name: comps[i], fd: parent === undefined ? undefined : openDir(parent, comps[i]) });
      }
      let fd = kept === 0 ? rootFd : held[kept - 1].fd;
      for (let i = kept; i < comps.length && fd !== undefined; i++) {
        const next = openDir(fd, comps[i]);
        closeDeep();
        fd = deep = next;
      }
      if (fd !== undefined) {
        for (const name of byDir.get(dir)!) {
          if (slices.due()) await slices.next();
          if (!isName(name)) continue;
          try {
            out.set(dir === "" ? name : `${dir}/${name}`, lstatSync(at(fd, name)));
          } catch {
            /* gone, or unreadable: absent */
          }
        }
      }
      closeDeep();
    }
  } finally {
    try {
      closeDeep();
      for (const { fd } of held.splice(0)) if (fd !== undefined) closeSync(fd);
    } finally {
      root.close();
    }
  }
  return out;
}

/** `name` in `dir` opened as a folder, never through a link; undefined when it is not a real folder. */
function openDir(dir: number, name: string): number | undefined {
  if (!isName(name)) return undefined;
  try {
    return openSync(at(dir, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch {
    return undefined;
  }
}

/** A name in its folder (git lists none other): never `..`, which would lead above it. */
const isName = (name: string) => name !== "" && name !== "." && name !== "..";
