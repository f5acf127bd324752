// Path resolution the kernel enforces: a workspace path is walked one component at a time, each
// opened with O_NOFOLLOW relative to the directory descriptor of the one before, starting from
// the workspace root opened once. Node has no openat(2), but Linux gives it through /proc:
// `/proc/self/fd/<dirfd>/<name>` looks `name` up in the directory the descriptor holds, and
// O_NOFOLLOW (or rename/unlink/mkdir, which never follow a last component) keeps a symbolic link
// from being followed by the kernel. A link met on the way is read (readlink on the link itself)
// and followed by the walk only while its target stays inside the workspace; `..` is handled
// here, never above the root. There is no window between a check and an open by name for a
// racing process to swap a folder for a link: what is opened is what was checked.
import { closeSync, constants, mkdirSync, openSync, readlinkSync } from "node:fs";
import { isAbsolute, posix } from "node:path";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** As the kernel's own limit on links followed in one lookup. */
export const MAX_LINK_HOPS = 40;

/** The name `name` inside the directory open as `dirFd`, as a path any fs call accepts. */
export const at = (dirFd: number, name: string) => `/proc/self/fd/${dirFd}/${name}`;
/** The object open as `fd` itself (a directory to list, the workspace root for a child's cwd). */
export const fdPath = (fd: number) => `/proc/self/fd/${fd}`;

export class PathError extends Error {
  /** The errno behind it, when there is one (ENOENT: a part of the path does not exist). */
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = "PathError";
  }
}

const show = (p: string) => JSON.stringify(p);
const code = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** True when `child` is `root` or lies under it, segment-wise (/ws-evil is not under /ws). */
export function isInside(root: string, child: string): boolean {
  const rel = posix.relative(root, child);
  return rel === "" || (rel !== ".." && !rel.startsWith("../") && !isAbsolute(rel));
}

/** The input's components after lexical `.`/`..` handling; refuses NUL bytes and anything outside. */
export function components(root: string, input: string): string[] {
  if (typeof input !== "string" || input.includes("\0")) throw new PathError("path must be a string without NUL bytes");
  let p = posix.normalize(input === "" ? "." : input);
  if (isAbsolute(p)) {
    if (!isInside(root, p)) throw new PathError(`path ${show(input)} is outside the workspace`);
    p = posix.relative(root, p) || ".";
  }
  if (p === ".." || p.startsWith("../")) throw new PathError(`path ${show(input)} is outside the workspace`);
  return p.split("/").filter((c) => c !== "" && c !== ".");
}

export interface WalkOptions {
  /** Open the last component with these flags (| O_NOFOLLOW; a link inside is followed). Without
   *  them the walk stops at the last component's parent, opens nothing there and follows no link. */
  open?: number;
  /** Create missing intermediate directories (mode 0755), as mkdir -p. */
  create?: boolean;
  /** Refuse paths whose real location is inside a `.git` folder, or the root itself. */
  write?: boolean;
  /** A missing folder on the way ends the walk with `missing` instead of an error. */
  partial?: boolean;
}

/** Where a walk ended. Everything it holds is released by close(); the root's fd never is. */
export interface Walked {
  /** The directory holding `name` (the root's fd, or one the walk opened). */
  dir: number;
  /** The last component; "" for the workspace root itself. */
  name: string;
  /** The real workspace-relative path (links inside resolved), forward slashes; "" is the root. */
  rel: string;
  /** With `open`: the last component's fd, or undefined when it does not exist. */
  fd?: number;
  /** Directories `create` made, outermost first (workspace-relative). */
  created: string[];
  /** With `partial`: a folder on the way is missing; `rel` is the path as it would be, and
   *  `dir`/`name` are not to be used. */
  missing?: boolean;
  close(): void;
}

/**
 * Walks `input` from `rootFd` (the workspace `root`, a real path). Intermediate links are followed
 * only to targets inside; the last component is followed only with `open`.
 */
export function walk(rootFd: number, root: string, input: string, opts: WalkOptions = {}): Walked {
  const pending = components(root, input);
  // Real names from the root to the current directory, and that directory's fd (root's is not ours).
  const names: string[] = [];
  let dir = rootFd;
  let fd: number | undefined;
  let hops = 0;
  let steps = 0;
  // What a `..` above the root, or a target outside, says: which link led there.
  let outside = "";
  const created: string[] = [];
  const closeDir = () => {
    if (dir !== rootFd) closeSync(dir);
    dir = rootFd;
  };
  const result = (name: string, missing = false): Walked => {
    const rel = posix.normalize([...names, name].filter(Boolean).join("/") || ".").replace(/^\.$/, "");
    if (rel === ".." || rel.startsWith("../"))
      throw new PathError(outside || `path ${show(input)} is outside the workspace`);
    if (opts.write && rel === "") throw new PathError("cannot write the workspace root itself");
    if (opts.write && rel.split("/").includes(".git"))
      throw new PathError(`path ${show(input)} is inside .git; git internals are not writable by file tools`);
    const heldDir = dir;
    const heldFd = fd;
    let closed = false;
    return {
      dir: heldDir,
      name,
      rel,
      fd: heldFd,
      created,
      missing,
      // Once: a second close would close whatever took these numbers since.
      close: () => {
        if (closed) return;
        closed = true;
        if (heldFd !== undefined) closeSync(heldFd);
        if (heldDir !== rootFd) closeSync(heldDir);
      },
    };
  };
  /** Follows the link `name` in `dir`; false when it is not a link. */
  const follow = (name: string, last: boolean): boolean => {
    let target: string;
    try {
      target = readlinkSync(at(dir, name));
    } catch (err) {
      if (code(err) === "EINVAL" || code(err) === "ENOENT") return false;
      throw err;
    }
    if (++hops > MAX_LINK_HOPS)
      throw new PathError(`path ${show(input)} has too many levels of symbolic links`, "ELOOP");
    outside ||= last
      ? `path ${show(input)} is a symbolic link pointing outside the workspace`
      : `path ${show(input)} leads outside the workspace through a symlink`;
    let parts = target.split("/");
    if (isAbsolute(target)) {
      if (!isInside(root, posix.normalize(target))) throw new PathError(outside);
      parts = posix.relative(root, posix.normalize(target)).split("/");
      closeDir();
      names.length = 0;
    }
    for (const part of parts.filter((c) => c !== "" && c !== ".").reverse()) pending.unshift(part);
    return true;
  };

  try {
    while (pending.length) {
      // Bounded even if a racing process keeps undoing what `create` makes.
      if (++steps > 10_000) throw new PathError(`path ${show(input)} kept changing while it was being opened`);
      const name = pending.shift()!;
      if (name === "..") {
        if (names.length === 0) throw new PathError(outside || `path ${show(input)} is outside the workspace`);
        names.pop();
        reopen();
        continue;
      }
      const last = pending.length === 0;
      if (last) {
        if (opts.open === undefined) return result(name);
        try {
          fd = openSync(at(dir, name), opts.open | O_NOFOLLOW);
          return result(name);
        } catch (err) {
          const c = code(err);
          if (c === "ENOENT") return result(name);
          if ((c === "ELOOP" || c === "ENOTDIR") && follow(name, true)) continue;
          throw err;
        }
      }
      // Before anything is opened or made under it.
      if (opts.write && name === ".git")
        throw new PathError(`path ${show(input)} is inside .git; git internals are not writable by file tools`);
      let next: number;
      try {
        next = openSync(at(dir, name), DIR_FLAGS);
      } catch (err) {
        const c = code(err);
        if ((c === "ENOTDIR" || c === "ELOOP") && follow(name, false)) continue;
        if (c === "ENOENT" && opts.partial && !opts.create) return result([name, ...pending].join("/"), true);
        if (c === "ENOENT" && opts.create) {
          try {
            mkdirSync(at(dir, name), 0o755);
            created.push([...names, name].join("/"));
          } catch (e) {
            if (code(e) !== "EEXIST") throw e;
          }
          pending.unshift(name);
          continue;
        }
        throw err;
      }
      closeDir();
      dir = next;
      names.push(name);
    }
    // No components left: the path names the root, or ended on a link to it or a `..`.
    const base = names.pop() ?? "";
    reopen();
    if (opts.open !== undefined && base === "") fd = openSync(fdPath(rootFd), opts.open);
    else if (opts.open !== undefined) fd = openSync(at(dir, base), opts.open | O_NOFOLLOW);
    return result(base);
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    closeDir();
    if (err instanceof PathError) throw err;
    throw explain(err as NodeJS.ErrnoException, input);
  }

  /** Opens `names` again from the root after a `..`: only real directories, never links. */
  function reopen(): void {
    closeDir();
    for (const n of names) {
      const next = openSync(at(dir, n), DIR_FLAGS);
      closeDir();
      dir = next;
    }
  }
}

/** An errno from the walk as a sentence that names the path, keeping its code. */
function explain(err: NodeJS.ErrnoException, input: string): Error {
  const why: Record<string, string> = {
    ENOENT: "does not exist",
    ENOTDIR: "has a part that is not a folder",
    ENAMETOOLONG: "has a name that is too long",
    ELOOP: "changed into a symbolic link while it was being opened",
  };
  if (!err.code || !why[err.code]) return err;
  return new PathError(`path ${show(input)} ${why[err.code]}`, err.code);
}
