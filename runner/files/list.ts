// list_files: a breadth-first listing that honours .gitignore files (root and nested) and is
// bounded, so a shallow overview survives the limit.
import { posix } from "node:path";
import ignore, { type Ignore } from "ignore";
import { FILE_LIMITS, ListFilesInput } from "../../server/protocol/file-ops";
import type { WorkspaceFs } from "../workspace/fs-at";
import { listedName } from "../../server/protocol/listed-names";
import { defineOp } from "../ops";

interface Rule {
  base: string;
  ig: Ignore;
}

/** Patterns per .gitignore, and wildcards per pattern, that the listing honours (see `rulesOf`). */
export const GITIGNORE_LIMITS = { patterns: 2_000, stars: 4, patternChars: 1_024 };

/**
 * The `ignore` matcher of a .gitignore's text. Its patterns become backtracking regular
 * expressions, tried on every entry listed: a pattern of seven `**` segments, on a path 60
 * folders deep, took minutes of the runner's event loop (every workspace on it), and 20,000
 * patterns a second a listing. Patterns with more than four `*`, or longer than 1,024 characters, and those past the
 * first 2,000 are left out (the listing may then show what git would not).
 */
export function rulesOf(text: string): Ignore {
  const kept = text
    .split(/\r?\n/)
    .filter(
      (line) =>
        line.length <= GITIGNORE_LIMITS.patternChars && (line.match(/\*/g)?.length ?? 0) <= GITIGNORE_LIMITS.stars,
    )
    .filter((line) => line.trim() && !line.startsWith("#"))
    .slice(0, GITIGNORE_LIMITS.patterns);
  return ignore().add(kept);
}

async function loadRule(files: WorkspaceFs, rel: string): Promise<Rule | null> {
  const r = await files
    .readFile(rel ? `${rel}/.gitignore` : ".gitignore", { follow: true, maxBytes: 1024 * 1024 })
    .catch(() => null);
  return r?.kind === "file" ? { base: rel, ig: rulesOf(r.data.toString("utf8")) } : null;
}

function ignored(rules: Rule[], rel: string, isDir: boolean): boolean {
  for (const rule of rules) {
    const sub = rule.base ? posix.relative(rule.base, rel) : rel;
    if (sub && !sub.startsWith("..") && rule.ig.ignores(isDir ? `${sub}/` : sub)) return true;
  }
  return false;
}

export const listFilesOp = defineOp({
  input: ListFilesInput,
  async run(input, ctx) {
    const files = ctx.workspace.files;
    const start = await ctx.workspace.resolve(input.path ?? ".", "read");
    const found = start.exists ? files.stat(start.rel) : null;
    if (!found) return { ok: false, output: `${input.path} does not exist` };
    if (!found.stats.isDirectory())
      return { ok: false, output: `${start.rel} is a file, not a directory; use read_file` };

    // Rules of the ancestors apply, unless the person asked for an ignored folder by name.
    let rules: Rule[] = [];
    const parts = start.rel ? start.rel.split("/") : [];
    for (let i = 0; i < parts.length; i++) {
      const rule = await loadRule(files, parts.slice(0, i).join("/"));
      if (rule) rules.push(rule);
    }
    if (start.rel && ignored(rules, start.rel, true)) rules = [];

    const limit = input.limit ?? FILE_LIMITS.listDefault;
    const maxDepth = input.depth ?? Infinity;
    const out: string[] = [];
    let truncated = false;
    let queue: Array<{ rel: string; depth: number; rules: Rule[] }> = [{ rel: start.rel, depth: 1, rules }];
    while (queue.length && !truncated) {
      const next: typeof queue = [];
      for (const dir of queue) {
        if (ctx.signal.aborted) throw new Error("cancelled");
        // The folder's first names only, as many as the listing can still show (and, when ignored
        // ones take their places, twice as many again, read anew): never the whole folder.
        let dirRules = dir.rules;
        for (let seen = 0, want = Math.max(limit - out.length + 1, 64); ; want *= 2) {
          const listed = await files
            .listSmallest(dir.rel, want, seen === 0 ? ".gitignore" : undefined)
            .catch(() => null);
          if (!listed) break;
          if (seen === 0 && listed.file)
            dirRules = [...dir.rules, { base: dir.rel, ig: rulesOf(listed.file.toString("utf8")) }];
          for (const e of listed.entries.slice(seen)) {
            if (e.name === ".git") continue;
            const rel = dir.rel ? `${dir.rel}/${e.name}` : e.name;
            const isDir = e.isDirectory();
            if (ignored(dirRules, rel, isDir)) continue;
            if (out.length >= limit) {
              truncated = true;
              break;
            }
            // A name that could read as another entry, a link, a folder or the note is quoted.
            out.push(listedName(rel) + (isDir ? "/" : e.isSymbolicLink() ? "@" : ""));
            if (isDir && dir.depth < maxDepth) next.push({ rel, depth: dir.depth + 1, rules: dirRules });
          }
          if (truncated || !listed.more) break;
          seen = listed.entries.length;
        }
        if (truncated) break;
      }
      queue = next;
    }
    out.sort();
    if (out.length === 0) return { ok: true, output: "(empty directory)", meta: { count: 0, truncated: false } };
    if (truncated) out.push(`[listing stopped at ${limit} entries; give a narrower path, a depth, or a larger limit]`);
    return { ok: true, output: out.join("\n"), meta: { count: out.length - (truncated ? 1 : 0), truncated } };
  },
});
