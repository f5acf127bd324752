// Paths in the runner's line-per-entry outputs (list_files, glob, search_text), which the IDE's
// tree and search panel parse and the model reads. A name is the agent's to choose: unquoted, a
// newline in it starts a forged entry of its own (`src/x\n.env` listed as a root `.env`, and its
// content found "in" `.env`), a last `@` or `/` makes a file read as a link or a folder, a
// leading `[` as the listing's note, and `No files match.` as an empty glob. Such a name is
// written as a JSON string, with the characters that reorder or break a line escaped too, and
// read back by `readQuotedName`.

/** Characters that end or reorder a line: C0, DEL, C1, line and paragraph separators, bidi controls. */
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, "g");

/** An output's own words for "nothing here", which a file of that name would pass for. */
const OUTPUT_WORDS = new Set(["No files match.", "No matches."]);

/** Whether `name` must be quoted: unsafe characters, a quote or note at its start, a suffix at its
 *  end, or the very words an output uses for "nothing found". */
function needsQuote(name: string, extra?: RegExp): boolean {
  return (
    UNSAFE.test(name) ||
    /^["[(]/.test(name) ||
    /[@/]$/.test(name) ||
    name === "" ||
    OUTPUT_WORDS.has(name) ||
    !!extra?.test(name)
  );
}

/** `name` as a line names it: as it is, or JSON-quoted. `extra`: what else the output needs quoted. */
export function listedName(name: string, extra?: RegExp): string {
  if (!needsQuote(name, extra)) return name;
  return JSON.stringify(name).replace(UNSAFE_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A quoted name at the start of `line` and what follows it; undefined when the line does not
 *  start with one (a plain name, or a malformed quote). */
export function readQuotedName(line: string): { name: string; rest: string } | undefined {
  const quoted = /^"(?:[^"\\]|\\.)*"/.exec(line)?.[0];
  if (!quoted) return undefined;
  try {
    return { name: JSON.parse(quoted) as string, rest: line.slice(quoted.length) };
  } catch {
    return undefined;
  }
}
