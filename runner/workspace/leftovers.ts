// What a runner killed -9 (or a machine that lost power) leaves in a workspace, removed when a
// runner serves it again: temps of atomic writes and of links put in place (`.<name>.quiver-<hex>
// .tmp` / `.lnk`, anywhere), a checkpoint restore's stage folder (`.quiver-restore-<hex>`, at the
// root only) and what is left of a folder the person deleted (`.quiver-gone-<hex>`, at the root
// only: fs-at's removeTreeAtomic). Left there they show in `git status`, get committed, and land
// in checkpoints.
//
// Only what the runner can prove is its own goes (fs-at/names.ts's exact patterns): a temp must be
// a regular file (`.tmp`) or a link (`.lnk`), a stage folder a real folder holding only files named
// by number; anything else by such a name (a person's, or a link the agent planted) is left as it
// is. A gone folder's files are the person's deleted ones, whatever they are: its name, and its
// being a real folder, not a link, is the proof. Everything is reached through descriptors opened
// O_NOFOLLOW from the workspace's own, and unlink/rmdir never follow a last component, so no
// planted link leads the removal outside.
//
// Two runners can serve one folder for a moment (a restarted server starts a new runner while the
// old one is still noticing its parent is gone; two servers on one folder), so an entry is removed
// only once it has been left alone for minAgeMs: a live write changes its temp (or its stage
// folder's files) all along; a gone folder's age is its ctime, which the rename to its name set
// (and which, unlike mtime, no one can set back). What was too young is looked at again once it
// could be old enough.
//
// The walk is bounded (maxDirs; .git and node_modules are not entered: the runner's file ops never
// write in .git, and rarely in node_modules) and async between folders, so it runs beside the
// runner's start-up and its first requests rather than before them.
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, rmdirSync, unlinkSync } from "node:fs";
import { readdir } from "node:fs/promises";
import type { WorkspaceFs } from "./fs-at";
import { GONE_NAME, STAGE_NAME, STAGED_FILE, TEMP_NAME } from "./fs-at/names";
import { removeEntrySliced } from "./fs-at/remove";
import { Slices } from "./fs-at/slices";
import { at, fdPath } from "./fs-at/walk";

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** Folders the walk never enters. */
const SKIP = new Set([".git", "node_modules"]);

export interface SweepOptions {
  /** An entry changed more recently than this is left (another runner's work in progress). */
  minAgeMs?: number;
  /** At most this many folders are listed. */
  maxDirs?: number;
  /** Stops the walk between folders (the workspace stops being served). */
  signal?: AbortSignal;
}

export interface SweepResult {
  /** Workspace-relative paths removed. */
  removed: string[];
  /** Leftovers seen but too recent to remove yet. */
  young: string[];
  /** Folders listed. */
  dirs: number;
  /** False when the walk stopped at maxDirs or on the signal. */
  complete: boolean;
}

export const DEFAULT_MIN_AGE_MS = 10 * 60_000;
const DEFAULT_MAX_DIRS = 50_000;
const MAX_DEPTH = 64;

const join = (rel: string, name: string) => (rel ? `${rel}/${name}` : name);

/** One pass over the workspace of `files`; errors on single entries are skipped, not thrown. */
export async function sweepLeftovers(files: WorkspaceFs, opts: SweepOptions = {}): Promise<SweepResult> {
  const minAge = opts.minAgeMs ?? DEFAULT_MIN_AGE_MS;
  const maxDirs = opts.maxDirs ?? DEFAULT_MAX_DIRS;
  const result: SweepResult = { removed: [], young: [], dirs: 0, complete: true };
  const oldEnough = (mtimeMs: number) => Date.now() - mtimeMs >= minAge;
  // A descriptor of our own on the root (files.cwd is the root's descriptor as a path): the
  // workspace closing meanwhile does not pull it from under the walk.
  const rootFd = openSync(files.cwd, O_RDONLY | O_DIRECTORY);
  // A folder can hold 50,000 planted temps: the loop is given back between slices of them.
  const slices = new Slices();

  const visit = async (fd: number, rel: string, depth: number): Promise<void> => {
    if (opts.signal?.aborted || result.dirs >= maxDirs) {
      result.complete = false;
      return;
    }
    result.dirs += 1;
    let entries;
    try {
      entries = await readdir(fdPath(fd), { withFileTypes: true });
    } catch {
      return; // removed meanwhile, or unreadable: not ours to judge
    }
    const subdirs: string[] = [];
    for (const e of entries) {
      if (slices.due()) await slices.next();
      const verdict = TEMP_NAME.test(e.name)
        ? removeTemp(fd, e.name, oldEnough)
        : depth === 0 && STAGE_NAME.test(e.name)
          ? removeStage(fd, e.name, oldEnough)
          : depth === 0 && GONE_NAME.test(e.name)
            ? await removeGone(fd, e.name, oldEnough, opts.signal)
            : "not ours";
      if (verdict === "removed") result.removed.push(join(rel, e.name));
      else if (verdict === "young") result.young.push(join(rel, e.name));
      // A folder of the person's, whatever its name, is walked like any other.
      else if (e.isDirectory() && !SKIP.has(e.name)) subdirs.push(e.name);
    }
    if (depth >= MAX_DEPTH) return;
    for (const name of subdirs) {
      let child: number;
      try {
        child = openSync(at(fd, name), DIR_FLAGS);
      } catch {
        continue; // swapped for a link or gone: never followed
      }
      try {
        await visit(child, join(rel, name), depth + 1);
      } finally {
        closeSync(child);
      }
    }
  };

  try {
    await visit(rootFd, "", 0);
  } finally {
    closeSync(rootFd);
  }
  return result;
}

type Verdict = "removed" | "young" | "not ours";

/** A temp: `.tmp` a regular file, `.lnk` a link (unlinked, never followed). */
function removeTemp(dir: number, name: string, oldEnough: (mtimeMs: number) => boolean): Verdict {
  try {
    const st = lstatSync(at(dir, name));
    const ours = name.endsWith(".tmp") ? st.isFile() : st.isSymbolicLink();
    if (!ours) return "not ours";
    if (!oldEnough(st.mtimeMs)) return "young";
    unlinkSync(at(dir, name));
    return "removed";
  } catch {
    return "not ours"; // gone meanwhile
  }
}

/**
 * A restore's stage folder: a real folder (a link by its name is left alone) holding only
 * regular files named by number, none changed within the age. Its files are unlinked through
 * the folder's own descriptor, then the folder by name (rmdir never follows a link).
 */
function removeStage(root: number, name: string, oldEnough: (mtimeMs: number) => boolean): Verdict {
  let fd: number;
  try {
    fd = openSync(at(root, name), DIR_FLAGS);
  } catch {
    return "not ours";
  }
  try {
    let newest = fstatSync(fd).mtimeMs;
    const children = readdirSync(fdPath(fd));
    for (const child of children) {
      if (!STAGED_FILE.test(child)) return "not ours";
      const st = lstatSync(at(fd, child));
      if (!st.isFile()) return "not ours";
      newest = Math.max(newest, st.mtimeMs);
    }
    if (!oldEnough(newest)) return "young";
    for (const child of children) unlinkSync(at(fd, child));
    rmdirSync(at(root, name));
    return "removed";
  } catch {
    return "not ours"; // changed meanwhile: a later sweep decides
  } finally {
    closeSync(fd);
  }
}

/**
 * What is left of a deleted folder: a real folder by its name (a link or a file is left alone),
 * renamed there at least the age ago. Removed entry by entry through descriptors opened
 * O_NOFOLLOW (a link inside is unlinked, never followed), awaiting between folders: it may be
 * a whole node_modules, and the runner serves requests meanwhile.
 */
async function removeGone(
  root: number,
  name: string,
  oldEnough: (mtimeMs: number) => boolean,
  signal?: AbortSignal,
): Promise<Verdict> {
  try {
    const st = lstatSync(at(root, name));
    if (!st.isDirectory()) return "not ours";
    if (!oldEnough(st.ctimeMs)) return "young";
    await removeEntrySliced(root, name, signal);
    return "removed";
  } catch {
    return "not ours"; // gone meanwhile, stopped, or something in it cannot be removed: a later sweep tries again
  }
}

/**
 * Sweeps once now (off the caller's path) and, when it met leftovers too recent to remove, once
 * more when they could be old enough. `log` hears what was removed. stop() ends both.
 */
export function sweepInBackground(
  files: WorkspaceFs,
  log: (line: string) => void,
  opts: Omit<SweepOptions, "signal"> = {},
): { done: Promise<void>; stop(): void } {
  const ctrl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const once = async (): Promise<SweepResult | undefined> => {
    if (ctrl.signal.aborted) return undefined;
    try {
      const r = await sweepLeftovers(files, { ...opts, signal: ctrl.signal });
      if (r.removed.length)
        log(
          `removed ${r.removed.length} leftover(s) of an interrupted write, restore or delete: ${r.removed.slice(0, 10).join(", ")}`,
        );
      if (!r.complete && !ctrl.signal.aborted) log(`leftover sweep stopped after ${r.dirs} folders`);
      return r;
    } catch (err) {
      // The workspace closed, or its root cannot be opened: nothing to clean now.
      if (!ctrl.signal.aborted) log(`leftover sweep failed: ${(err as Error).message}`);
      return undefined;
    }
  };
  const done = new Promise<void>((resolve) => {
    setImmediate(() => {
      void once().then((r) => {
        if (!r?.young.length || ctrl.signal.aborted) return resolve();
        timer = setTimeout(() => void once().then(() => resolve()), (opts.minAgeMs ?? DEFAULT_MIN_AGE_MS) + 1000);
        // The second look never keeps a runner alive on its own.
        timer.unref();
        ctrl.signal.addEventListener("abort", () => resolve(), { once: true });
      });
    });
  });
  return {
    done,
    stop: () => {
      ctrl.abort();
      clearTimeout(timer);
    },
  };
}
