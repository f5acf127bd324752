// Files whose writing steers what runs, so a write tool never treats such a write as an ordinary
// edit: it is asked about every time (no mode or session approval waives it), and the card says why.
// - Git's: anything under a `.git` folder, the attribute and module files, and the names that make
//   a plain folder a git directory (`HEAD`, `config`, `packed-refs`, ... beside `objects/` and
//   `refs/`). Git obeys what they say — hooks, fsmonitor, filter and diff drivers, pagers run programs.
// - The checks file (`quiver.checks.json`): run_check runs the argv it declares, and an org may
//   allow run_check while it asks for shell; an edit waived by accept-edits mode would turn that
//   into any command run unasked. Matched at any depth and in any case, so no spelling of the path
//   (`./`, `sub/../`, a folder link) slips past.
// Decided by name only: whether `objects/` sits beside a `HEAD` is a fact of the disk that can
// change after a check.

import { parsePatch } from "diff";
import { CHECKS_FILE } from "../protocol/checks";

// A path component that is a git directory, or lives in one.
const GIT_DIR_COMPONENT = /^\.git$/i;
// Files git reads from the work tree itself.
const WORKTREE_FILES = new Set([".gitattributes", ".gitmodules", ".gitconfig", ".git"]);
// Names that, beside `objects/` and `refs/`, make a folder a repository, and what git reads there.
const GIT_DIR_FILES = new Set([
  "head",
  "config",
  "config.worktree",
  "packed-refs",
  "commondir",
  "gitdir",
  "orig_head",
  "fetch_head",
  "index",
]);

function components(path: string): string[] {
  return path
    .replace(/\\/g, "/")
    .split("/")
    .filter((c) => c.length > 0 && c !== ".");
}

/** Whether `path` names the checks file (its last component, in any case). */
export function isChecksFile(path: string): boolean {
  const parts = components(path);
  return parts.length > 0 && parts[parts.length - 1].toLowerCase() === CHECKS_FILE.toLowerCase();
}

/** Whether writing `path` (relative to the workspace) could change what git, or run_check, runs. */
export function steersGit(path: string): boolean {
  const parts = components(path);
  if (parts.length === 0) return false;
  if (isChecksFile(path)) return true;
  if (parts.some((c) => GIT_DIR_COMPONENT.test(c.replace(/[. ]+$/, "")))) return true;
  const name = parts[parts.length - 1].toLowerCase();
  if (WORKTREE_FILES.has(name)) return true;
  if (GIT_DIR_FILES.has(name)) return true;
  // `x/hooks/pre-commit` matters only inside a git dir; `x/refs/heads/main` and `x/objects/ab/…`
  // help make one. Files with an extension under `hooks/` stay ordinary (`src/hooks/useThing.ts`).
  if (parts.length >= 2 && parts[parts.length - 2].toLowerCase() === "hooks" && !name.includes(".")) return true;
  for (let i = 0; i < parts.length - 1; i++) {
    const [c, next] = [parts[i].toLowerCase(), parts[i + 1].toLowerCase()];
    if (c === "refs" && /^(heads|tags|remotes)$/.test(next)) return true;
    if (c === "objects" && /^([0-9a-f]{2}|pack|info)$/.test(next)) return true;
  }
  return false;
}

function strings(input: unknown, ...keys: string[]): string[] {
  if (!input || typeof input !== "object") return [];
  const out: string[] = [];
  for (const k of keys) {
    const v = (input as Record<string, unknown>)[k];
    if (typeof v === "string") out.push(v);
  }
  return out;
}

/**
 * The paths a write tool's input names (a path field, or a patch's file headers). A patch's are
 * read as the runner reads them (the same parser, runner/files/patch.ts, which takes any blank
 * after `---` and `+++`) and by git's header lines too, so every name either could write is
 * judged; an `a/` or `b/` prefix is dropped (it never decides whether a path steers git).
 */
export function writtenPaths(input: unknown): string[] {
  const paths = strings(input, "path", "file_path");
  const named: string[] = [];
  for (const patch of strings(input, "patch", "diff")) {
    for (const m of patch.matchAll(/^(?:\+\+\+|---)[ \t]+([^\t\n]+)|^(?:rename|copy) to (.+)$/gm))
      named.push((m[1] ?? m[2]).trim().replace(/^"|"$/g, ""));
    try {
      for (const f of parsePatch(patch)) named.push(...[f.oldFileName, f.newFileName].filter((n) => n !== undefined));
    } catch {
      /* the runner cannot parse it either, so it writes nothing */
    }
  }
  paths.push(...named.map((p) => p.replace(/^[ab]\//, "")).filter((p) => p && p !== "/dev/null"));
  return [...new Set(paths)];
}

/** The written paths that steer git. */
export function gitPathsOf(input: unknown): string[] {
  return writtenPaths(input).filter(steersGit);
}
