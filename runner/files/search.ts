// search_text and glob, both through ripgrep so .gitignore is honoured the same way everywhere.
import { SearchTextInput, GlobInput, FILE_LIMITS } from "../../server/protocol/file-ops";
import { listedName } from "../../server/protocol/listed-names";
import { defineOp, type OpContext } from "../ops";
import { RG_COMMON, runRg } from "./rg";

async function searchRoot(ctx: OpContext, path: string | undefined): Promise<string[]> {
  if (!path) return [];
  const target = await ctx.workspace.resolve(path, "read");
  if (!target.exists) throw new Error(`${path} does not exist`);
  // ripgrep opens a path it is named blocking: a FIFO there held the call to its deadline.
  const stats = ctx.workspace.files.stat(path)?.stats;
  if (stats && !stats.isFile() && !stats.isDirectory())
    throw new Error(`${path} is not a file or folder (a pipe, socket or device): nothing to search`);
  return target.rel ? ["--", target.rel] : [];
}

/**
 * rg's `path\0N:text` (a hit) and `path\0N-text` (context) records as the output's lines, each
 * path quoted when it could read as something else (listed-names.ts), with "--" between groups
 * that are not adjacent, as rg writes it. A record with no NUL (rg's note on a binary file) as is.
 */
export function hitLines(records: string[], context: boolean): { lines: string[]; matches: number } {
  const lines: string[] = [];
  let matches = 0;
  let last: { path: string; line: number } | undefined;
  for (const record of records) {
    const nul = record.indexOf("\0");
    const m = nul < 0 ? null : /^(\d+)([:-])/.exec(record.slice(nul + 1));
    if (!m) {
      lines.push(record.replaceAll("\0", ""));
      continue;
    }
    const path = record.slice(0, nul);
    const line = Number(m[1]);
    if (context && last && (last.path !== path || line !== last.line + 1)) lines.push("--");
    last = { path, line };
    if (m[2] === ":") matches++;
    lines.push(`${listedName(path, /:\d/)}${m[2]}${record.slice(nul + 1)}`);
  }
  return { lines, matches };
}

export const searchTextOp = defineOp({
  input: SearchTextInput,
  async run(input, ctx) {
    const max = input.max_results ?? FILE_LIMITS.searchDefault;
    // `--null` ends each path with a NUL, so a name holding a newline or `:7:` is told apart from
    // the hit; the groups' "--" separators are put back below, where no name can fake one.
    const args = [...RG_COMMON, "--null", "--no-context-separator", "--line-number", "--with-filename"];
    args.push("--no-heading", "--sort", "path");
    args.push("--max-columns", String(FILE_LIMITS.searchMaxLineChars), "--max-columns-preview");
    if (!input.regex) args.push("--fixed-strings");
    args.push(
      input.case_sensitive === undefined ? "--smart-case" : input.case_sensitive ? "--case-sensitive" : "--ignore-case",
    );
    if (input.glob) args.push("--glob", input.glob);
    if (input.context) args.push("--context", String(input.context));
    args.push("--regexp", input.pattern, ...(await searchRoot(ctx, input.path)));
    const r = await runRg(ctx.workspace.helpers, args, {
      signal: ctx.signal,
      maxLines: max * (1 + 2 * (input.context ?? 0)),
      records: "hits",
    });
    if (r.code === 2) return { ok: false, output: `search failed: ${r.stderr.split("\n").slice(-6).join("\n")}` };
    if (r.lines.length === 0) return { ok: true, output: "No matches.", meta: { matches: 0, truncated: false } };
    const { lines, matches } = hitLines(r.lines, !!input.context);
    const out = lines.join("\n");
    const tail = r.truncated ? `\n[results stopped at ${max} matching lines; narrow the pattern, path or glob]` : "";
    return { ok: true, output: out + tail, meta: { matches, truncated: r.truncated } };
  },
});

export const globOp = defineOp({
  input: GlobInput,
  async run(input, ctx) {
    const limit = input.limit ?? FILE_LIMITS.globDefault;
    const args = [
      ...RG_COMMON,
      "--files",
      "--null",
      "--sort",
      "path",
      "--glob",
      input.pattern,
      ...(await searchRoot(ctx, input.path)),
    ];
    const r = await runRg(ctx.workspace.helpers, args, { signal: ctx.signal, maxLines: limit, records: "paths" });
    r.lines = r.lines.map((p) => listedName(p));
    if (r.code === 2) return { ok: false, output: `glob failed: ${r.stderr.split("\n").slice(-6).join("\n")}` };
    if (r.lines.length === 0) return { ok: true, output: "No files match.", meta: { count: 0, truncated: false } };
    const tail = r.truncated ? `\n[stopped at ${limit} paths; use a narrower pattern or path]` : "";
    return { ok: true, output: r.lines.join("\n") + tail, meta: { count: r.lines.length, truncated: r.truncated } };
  },
});
