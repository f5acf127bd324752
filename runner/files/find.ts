// ide_find: quick open's search past the tree's listing. Every file ripgrep lists (.gitignore
// honoured, as the tree and search do) whose path holds the query's characters in order; the
// IDE ranks what comes back with the same scoring it gives the listed files.
import { PERSON_FILE_LIMITS, PERSON_FILE_OPS, type PersonFound } from "../../server/protocol/person-file-ops";
import { defineOp } from "../ops";
import { RG_COMMON, runRg } from "./rg";

/** Whether `path` holds `query`'s characters in order, ignoring case. */
export function holdsInOrder(path: string, query: string): boolean {
  const p = path.toLowerCase();
  let at = -1;
  for (const ch of query.toLowerCase()) {
    at = p.indexOf(ch, at + 1);
    if (at < 0) return false;
  }
  return true;
}

export const ideFind = defineOp({
  input: PERSON_FILE_OPS.ide_find,
  async run(input, ctx) {
    // NUL-ended paths: a name holding a newline is one path, not two that do not exist.
    const r = await runRg(ctx.workspace.helpers, ["--files", "--null", ...RG_COMMON], {
      signal: ctx.signal,
      records: "paths",
      maxLines: PERSON_FILE_LIMITS.maxFound,
      keep: (line) => holdsInOrder(line, input.query),
    });
    if (r.code === 2 && r.lines.length === 0) return { ok: false, output: `listing files failed: ${r.stderr}` };
    const meta: PersonFound = { paths: r.lines.map((l) => l.replace(/^\.\//, "")), truncated: r.truncated };
    return { ok: true, output: `${meta.paths.length} file(s)`, meta };
  },
});
