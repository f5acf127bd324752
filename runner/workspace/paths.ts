// Path confinement: every path a tool names is resolved against the workspace root and refused
// if it leaves it (../, absolute paths elsewhere, /ws vs /ws-evil, symlinks pointing out).
import { lstat, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

export class PathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PathError";
  }
}

export interface ResolvedPath {
  /** Absolute path on disk (real parent directory + final component). */
  abs: string;
  /** Workspace-relative, forward slashes; "" is the root itself. */
  rel: string;
  /** lstat of the final component, undefined when it does not exist. */
  exists: boolean;
  isSymlink: boolean;
}

/** True when `child` is `root` or lies under it (segment-wise: /ws-evil is not under /ws). */
export function isInside(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

export function toRel(root: string, abs: string): string {
  return relative(root, abs).split(sep).join("/");
}

const display = (p: string) => JSON.stringify(p);

/**
 * Resolves `input` inside `root` (already a realpath). Reads follow a final symlink only when
 * its target stays inside; writes refuse a symlink as the final component and anything under
 * a `.git` directory.
 */
export async function resolveInside(root: string, input: string, mode: "read" | "write"): Promise<ResolvedPath> {
  if (typeof input !== "string" || input.includes("\0")) throw new PathError("path must be a string without NUL bytes");
  const lexical = resolve(root, input === "" ? "." : input);
  if (!isInside(root, lexical)) throw new PathError(`path ${display(input)} is outside the workspace`);

  // Resolve the parent through realpath (walking up to the deepest existing ancestor), so a
  // symlinked directory anywhere on the way cannot lead out.
  const name = lexical === root ? "" : basename(lexical);
  const parent = lexical === root ? root : dirname(lexical);
  const realParent = await realExistingPrefix(parent);
  if (!isInside(root, realParent)) throw new PathError(`path ${display(input)} leads outside the workspace through a symlink`);
  const abs = name ? join(realParent, name) : realParent;

  let exists = false;
  let isSymlink = false;
  try {
    const st = await lstat(abs);
    exists = true;
    isSymlink = st.isSymbolicLink();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT" && (err as NodeJS.ErrnoException).code !== "ENOTDIR") throw err;
  }
  if (isSymlink) {
    if (mode === "write") throw new PathError(`path ${display(input)} is a symbolic link; file tools do not write through links`);
    let target: string;
    try {
      target = await realpath(abs);
    } catch {
      throw new PathError(`path ${display(input)} is a broken symbolic link`);
    }
    if (!isInside(root, target)) throw new PathError(`path ${display(input)} is a symbolic link pointing outside the workspace`);
  }
  const rel = toRel(root, abs);
  if (mode === "write") {
    if (rel === "") throw new PathError("cannot write the workspace root itself");
    if (rel.split("/").includes(".git")) throw new PathError(`path ${display(input)} is inside .git; git internals are not writable by file tools`);
  }
  return { abs, rel, exists, isSymlink };
}

/** realpath of the longest existing prefix of `p`, with the missing tail appended. */
async function realExistingPrefix(p: string): Promise<string> {
  const tail: string[] = [];
  let cur = p;
  for (;;) {
    try {
      const real = await realpath(cur);
      return tail.length ? join(real, ...tail.reverse()) : real;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
      // A name that lstat sees but realpath cannot resolve is a dangling link: where it
      // points is unknowable until something creates the target, so refuse it.
      if (await lstat(cur).then(() => true, () => false)) throw new PathError(`path component ${display(basename(cur))} is a dangling symbolic link`);
      const up = dirname(cur);
      if (up === cur) throw err;
      tail.push(basename(cur));
      cur = up;
    }
  }
}
