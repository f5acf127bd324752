// Path confinement as the file tools see it: what a path names inside the workspace, refused
// when it leaves it (../, absolute paths elsewhere, /ws vs /ws-evil, links pointing out, .git for
// writes). The answer describes the path; it grants nothing: every operation walks the path
// again from the root's descriptor (fs-at/), so a link swapped in after this check still cannot
// lead it out.
import { lstatSync, realpathSync } from "node:fs";
import { at, isInside, PathError, WorkspaceFs } from "./fs-at";

export { isInside, PathError };

export interface ResolvedPath {
  /** root + rel: for messages and a sandboxed command's cwd, never to open by name. */
  abs: string;
  /** Workspace-relative, forward slashes, folders on the way real (links inside resolved); "" is the root. */
  rel: string;
  exists: boolean;
  /** The last component is a link (to a target inside; reads follow it, writes refuse it). */
  isSymlink: boolean;
}

/** Resolves `input` in `files`' workspace. Reads may end on a link whose target stays inside;
 *  writes refuse a link as the last component and anything under a `.git` folder. */
export function resolveIn(files: WorkspaceFs, input: string, mode: "read" | "write"): ResolvedPath {
  const show = JSON.stringify(input);
  const w = files.walk(input, { write: mode === "write", partial: true });
  let exists = false;
  let isSymlink = false;
  try {
    if (!w.missing) {
      try {
        isSymlink = lstatSync(at(w.dir, w.name || ".")).isSymbolicLink();
        exists = true;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
      }
    }
  } finally {
    w.close();
  }
  if (isSymlink) {
    if (mode === "write") throw new PathError(`path ${show} is a symbolic link; file tools do not write through links`);
    // Throws when the target is outside; null when it leads nowhere.
    if (files.stat(input) === null) throw new PathError(`path ${show} is a broken symbolic link`);
  }
  const abs = w.rel ? `${files.root}/${w.rel}` : files.root;
  return { abs, rel: w.rel, exists, isSymlink };
}

/** resolveIn for a caller without a Workspace (a command's cwd): opens `root` for this one walk. */
export async function resolveInside(root: string, input: string, mode: "read" | "write"): Promise<ResolvedPath> {
  const files = WorkspaceFs.open(realpathSync(root));
  try {
    return resolveIn(files, input, mode);
  } finally {
    files.close();
  }
}
