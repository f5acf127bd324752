// Search in files, the pure part: where the query matches in a result line (to highlight it and
// to select it in the editor), judged the way the runner's ripgrep judged the line: literal or
// regex, exact case only when asked or when the query has capitals (smart case).

export interface SearchOptions {
  query: string;
  regex: boolean;
  /** undefined: smart case. */
  caseSensitive?: boolean;
}

/** The first match in `text` as [start, end) in UTF-16 units, or undefined (a regex JavaScript
 *  reads otherwise than ripgrep: the line still shows, unhighlighted). */
export function firstMatch(text: string, o: SearchOptions): [number, number] | undefined {
  if (!o.query) return undefined;
  const exact = o.caseSensitive ?? /\p{Lu}/u.test(o.query);
  if (!o.regex) {
    const at = exact ? text.indexOf(o.query) : text.toLowerCase().indexOf(o.query.toLowerCase());
    return at < 0 ? undefined : [at, at + o.query.length];
  }
  try {
    const m = new RegExp(o.query, exact ? "u" : "iu").exec(text);
    return m && m[0].length > 0 ? [m.index, m.index + m[0].length] : undefined;
  } catch {
    return undefined;
  }
}

/** A long line cut to a window around its match, so the match shows in a narrow pane. */
export function around(
  text: string,
  match: [number, number] | undefined,
  before = 30,
): { text: string; match?: [number, number] } {
  const trimmed = text.replace(/^\s+/, "");
  const cut = text.length - trimmed.length;
  if (!match) return { text: trimmed };
  let start = match[0] - cut;
  let shown = trimmed;
  if (start > before) {
    shown = `…${trimmed.slice(start - before)}`;
    start = before + 1;
  }
  return { text: shown, match: [start, start + match[1] - match[0]] };
}
