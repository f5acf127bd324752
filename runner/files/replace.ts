// ide_replace: Replace All of the search panel. Line by line, as ripgrep matched the search
// (a pattern never spans lines), in the files the person's results listed; each file written
// atomically, its earlier content kept for the Changes panel, the change announced. A file
// that is binary, not UTF-8 or gone is left alone and named in the answer.
import { PERSON_FILE_OPS, type PersonFileInput, type PersonReplaced } from "../../server/protocol/person-file-ops";
import { applyChange, readNoFollow } from "../workspace/atomic";
import { defineOp } from "../ops";
import { looksBinary, utf8Text } from "./text";

type Input = PersonFileInput<"ide_replace">;

/** The search as a global JavaScript regex (smart case, as the search ran); throws on a bad regex. */
export function searchRegex(input: Pick<Input, "pattern" | "regex" | "caseSensitive">): RegExp {
  const exact = input.caseSensitive ?? /\p{Lu}/u.test(input.pattern);
  const source = input.regex ? input.pattern : input.pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(source, exact ? "gu" : "giu");
}

/** `text` with every match replaced line by line; how many matches there were. A literal
 *  replacement is taken as written; a regex one expands $1, $&, $<name> as JavaScript does. */
export function replaceLines(
  text: string,
  re: RegExp,
  replacement: string,
  literal: boolean,
): { text: string; count: number } {
  let count = 0;
  const out = text.split("\n").map((line) => {
    const n = [...line.matchAll(re)].length;
    if (n === 0) return line;
    count += n;
    return literal ? line.replace(re, () => replacement) : line.replace(re, replacement);
  });
  return { text: out.join("\n"), count };
}

export const ideReplace = defineOp({
  input: PERSON_FILE_OPS.ide_replace,
  async run(input, ctx) {
    let re: RegExp;
    try {
      re = searchRegex(input);
    } catch (err) {
      return {
        ok: false,
        output: `The pattern is not a regular expression JavaScript can replace with: ${(err as Error).message}`,
      };
    }
    // It would insert the replacement between every two characters.
    if (new RegExp(re.source, re.flags.replace("g", "")).test(""))
      return { ok: false, output: "The pattern matches empty text; make it match at least one character." };
    const meta: PersonReplaced = { files: 0, replacements: 0, skipped: [] };
    const changed: string[] = [];
    for (const path of [...new Set(input.paths)]) {
      const target = await ctx.workspace.resolve(path, "write");
      const before = target.exists ? await readNoFollow(ctx.workspace.files, target.rel) : null;
      if (!before) {
        meta.skipped.push({ path: target.rel, reason: "it no longer exists" });
        continue;
      }
      const text = looksBinary(before.data) ? undefined : utf8Text(before.data);
      if (text === undefined) {
        meta.skipped.push({ path: target.rel, reason: "it is not UTF-8 text" });
        continue;
      }
      const r = replaceLines(text, re, input.replacement, !input.regex);
      if (r.count === 0) continue;
      await applyChange(ctx.workspace.files, target.rel, Buffer.from(r.text, "utf8"), before);
      ctx.workspace.diff.rememberBaseline(target.rel, before.data);
      changed.push(target.rel);
      meta.files++;
      meta.replacements += r.count;
    }
    if (changed.length) ctx.filesChanged(changed);
    const skipped = meta.skipped.length
      ? `; left alone: ${meta.skipped.map((s) => `${s.path} (${s.reason})`).join(", ")}`
      : "";
    return { ok: true, output: `replaced ${meta.replacements} match(es) in ${meta.files} file(s)${skipped}`, meta };
  },
});
