// The folders a burst of watched changes happened in. The native watcher can drop some events of
// a burst of thousands (parcel-bundler/watcher#183: seen here, 2 of 3,000 new files in one
// folder unannounced), so a folder with many changes at once is announced too: the IDE then
// lists it again and shows what the dropped events would have.
import { posix } from "node:path";

/** Changes in one folder, within one flush, past which the folder itself is announced. */
export const BURST = 64;

/** Folders ("" for the root) holding at least `threshold` of `paths` directly. */
export function burstFolders(paths: readonly string[], threshold = BURST): string[] {
  const counts = new Map<string, number>();
  for (const p of paths) {
    const dir = posix.dirname(p);
    const key = dir === "." ? "" : dir;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].filter(([, n]) => n >= threshold).map(([dir]) => dir);
}
