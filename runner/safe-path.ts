// The PATH the runner finds its own programs on (bwrap, bash, setpriv, git, prlimit…), which run
// outside the sandbox or hold what the agent must not have (the network git's token). A folder
// the agent can write must never be on it: one inside a served workspace (npm puts a project's
// node_modules/.bin first for a runner started by an npm script in that project), or a relative
// entry (`.`, an empty one: whatever folder the program starts in). Each kept folder is given as
// its real path, so a link on the way cannot be swapped into the workspace later.
import { accessSync, constants, realpathSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";

/** Whether `path` is `dir` or below it (by name). */
export const inside = (path: string, dir: string) =>
  path === dir || path.startsWith(dir.endsWith("/") ? dir : `${dir}/`);

/** Where `path` leads, or undefined when it does not exist. */
export function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** `path` (a PATH value) without relative entries, missing folders and folders inside any of
 *  `served` by name or by where they lead; each kept folder as its real path, once. */
export function safePath(path: string | undefined, served: (string | undefined)[]): string {
  const guarded = served
    .filter((s): s is string => !!s)
    .flatMap((s) => [resolve(s), real(s)])
    .filter((s): s is string => !!s);
  const kept: string[] = [];
  for (const dir of (path ?? "").split(delimiter)) {
    if (!isAbsolute(dir) || guarded.some((g) => inside(dir, g))) continue;
    const r = real(dir);
    if (!r || guarded.some((g) => inside(r, g)) || kept.includes(r)) continue;
    kept.push(r);
  }
  return kept.join(delimiter);
}

/** `name`'s full path in `path` (a safePath), or `name` itself when none has it. */
export function lookup(name: string, path: string): string {
  for (const dir of path.split(delimiter)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      /* the next folder */
    }
  }
  return name;
}
