// The tree's listing of a large workspace, pure: the runner lists the workspace breadth first up
// to a cap, and when that listing was cut short each folder the person opens is read on its
// own. This folds those folder reads into the whole listing.
import type { TreeEntry } from "../../../server/protocol/ide-types";

/** A folder read on its own ("" is the workspace root): its entries, one level deep. */
export interface FolderListing {
  folder: string;
  entries: TreeEntry[];
}

const parentOf = (path: string) => path.slice(0, Math.max(0, path.lastIndexOf("/")));

/** The whole listing with each folder's own read in it: the folder read is the newer word on
 *  what the folder holds, so a child it no longer has goes, and everything under that child. */
export function mergeListings(whole: TreeEntry[], folders: FolderListing[]): TreeEntry[] {
  if (folders.length === 0) return whole;
  const byPath = new Map(whole.map((e) => [e.path, e]));
  for (const { folder, entries } of folders) {
    const fresh = new Set(entries.map((e) => e.path));
    const gone = [...byPath.keys()].filter((p) => parentOf(p) === folder && !fresh.has(p));
    if (gone.length > 0) {
      for (const p of [...byPath.keys()]) if (gone.some((g) => p === g || p.startsWith(`${g}/`))) byPath.delete(p);
    }
    for (const e of entries) byPath.set(e.path, e);
  }
  return [...byPath.values()];
}
