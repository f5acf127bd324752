// Word values as bash would pass them: quotes removed, backslashes resolved, line continuations
// joined. Anything whose value depends on run time (expansions, substitutions, globs, `~`,
// braces) stays dynamic, with its source text.
import type { Node } from "./parser";
import type { Word } from "./types";

const DYNAMIC_NODES = new Set([
  "simple_expansion",
  "expansion",
  "command_substitution",
  "process_substitution",
  "arithmetic_expansion",
  "brace_expression",
  "ansi_c_string",
]);

// Brace expansion (`{a,b}`, `{1..3}`) makes several words of one; `{}` alone stays itself.
const BRACES = /\{[^{}]*(,|\.\.)[^{}]*\}/;

// An unquoted glob character that bash would expand against file names.
function unquotedGlob(raw: string): boolean {
  let escaped = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (escaped) escaped = false;
    else if (c === "\\") escaped = true;
    else if (c === "*" || c === "?") return true;
    else if (c === "[" && raw.indexOf("]", i + 2) > i) return true;
  }
  return false;
}

// Bare word: `\x` is x and a backslash-newline vanishes.
function unescapeBare(raw: string): string {
  return raw.replace(/\\(\r?\n|.)/gs, (_, c: string) => (c === "\n" || c === "\r\n" ? "" : c));
}

// Inside double quotes only these characters are escaped.
function unescapeDouble(raw: string): string {
  return raw.replace(/\\(\r?\n|[$`"\\])/g, (_, c: string) => (c.endsWith("\n") ? "" : c));
}

/**
 * `$'…'` is decoded by bash as it parses, so its value is known: `rm $'-r\x66'` is `rm -rf`.
 * Only where an escape makes a byte past ASCII (or NUL, which ends bash's word) do bash's bytes,
 * which depend on the locale, and our characters differ: that word is left to run time.
 */
function ansiC(body: string): Word | undefined {
  let exact = true;
  const text = body.replace(ANSI_C_ESCAPE, (escape) => {
    const decoded = decodeAnsiC(escape);
    if (/[^\x01-\x7f]/.test(decoded)) exact = false;
    return decoded;
  });
  return exact ? { text, dynamic: false } : undefined;
}

/** The value of one argument-like node. */
export function wordOf(node: Node): Word {
  const source = node.text;
  switch (node.type) {
    case "word":
    case "number": {
      // `{a,b}` splits into words, a leading `~` is a home folder, globs match files.
      if (/^~/.test(source) || BRACES.test(source.replace(/\\./g, ""))) return { text: source, dynamic: true };
      if (unquotedGlob(source)) return { text: source, dynamic: true, globOnly: true };
      return { text: unescapeBare(source), dynamic: false };
    }
    case "raw_string":
      return { text: source.slice(1, -1), dynamic: false };
    case "ansi_c_string":
      return ansiC(source.slice(2, -1)) ?? { text: source, dynamic: true };
    case "string":
    case "translated_string":
      return stringOf(node);
    case "concatenation": {
      const parts = node.children.map(wordOf);
      // The grammar splits `-[o]` into `-`, `[`, `o`, `]`: a bracket glob spans parts. Quoted parts
      // keep a `]` that may close it, but open nothing.
      const bare = node.children.map((c) => (c.type === "word" ? c.text : c.text.replace(/[*?[]/g, "_"))).join("");
      if (!parts.some((p) => p.dynamic) && unquotedGlob(bare)) return { text: source, dynamic: true, globOnly: true };
      const dynamic = parts.some((p) => p.dynamic) || BRACES.test(source.replace(/\\./g, ""));
      const globOnly = dynamic && parts.every((p) => !p.dynamic || p.globOnly);
      return { text: dynamic ? source : parts.map((p) => p.text).join(""), dynamic, ...(globOnly ? { globOnly } : {}) };
    }
    default:
      return { text: source, dynamic: true };
  }
}

// A double-quoted string: literal pieces between the children, children that expand are dynamic.
function stringOf(node: Node): Word {
  const source = node.text;
  const open = node.type === "translated_string" ? 2 : 1;
  const start = node.startIndex + open;
  const end = node.endIndex - 1;
  let text = "";
  let at = start;
  let dynamic = false;
  for (const child of node.children) {
    if (child.startIndex < start || child.endIndex > end) continue;
    if (DYNAMIC_NODES.has(child.type)) dynamic = true;
    else if (child.type !== "string_content") dynamic = true;
    text += source.slice(at - node.startIndex, child.startIndex - node.startIndex);
    at = child.endIndex;
    if (child.type === "string_content") text += child.text;
  }
  text += source.slice(at - node.startIndex, end - node.startIndex);
  // `"$@"` and `"${a[@]}"` make as many words as there are elements; other quoted text is one.
  if (dynamic) return source.includes("@") ? { text: source, dynamic } : { text: source, dynamic, oneWord: true };
  return { text: unescapeDouble(text), dynamic: false };
}

const SIMPLE: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

// `\c\\` is control-backslash: bash reads the escaped backslash after `\c` as one character.
const ANSI_C_ESCAPE = /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c\\\\|c.|.)/gs;

/** The body of `$'…'` as bash decodes it: `\x6c`, `\154`, `\u006c`, `\cA`, `\c?` (DEL), `\n`, … */
export function decodeAnsiC(body: string): string {
  return body.replace(ANSI_C_ESCAPE, (whole, e: string) => {
    if (/^[xuU]/.test(e) && e.length > 1) {
      const code = parseInt(e.slice(1), 16);
      return code <= 0x10ffff ? String.fromCodePoint(code) : "";
    }
    if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8) & 0xff);
    if (e[0] === "c" && e.length > 1) return String.fromCharCode(e[1] === "?" ? 0x7f : e.charCodeAt(1) & 0x1f);
    return SIMPLE[e] ?? whole;
  });
}

/**
 * A here-document's delimiter as bash reads the word at `at`: quotes removed and nothing expanded
 * (`$'E\x4f'` stays `E\x4f`), a line continuation joined; `quoted` when any part of it is, which
 * leaves the body as written. Undefined for a word this does not read (a substitution in it).
 */
export function delimiterAt(line: string, at: number): { text: string; quoted: boolean; end: number } | undefined {
  let text = "";
  let quoted = false;
  let i = at;
  const substitution = (j: number) => line[j] === "`" || (line[j] === "$" && /[({]/.test(line[j + 1] ?? ""));
  // A CRLF line's CR ends bash's word no more than its body lines: read it as the line's end.
  while (i < line.length && !/[ \t\n|&;<>()]/.test(line[i]) && !line.startsWith("\r\n", i)) {
    const c = line[i];
    const dollar = c === "$" && /['"]/.test(line[i + 1] ?? "");
    const quote = dollar ? line[i + 1] : c;
    if (substitution(i)) return undefined;
    if (c === "\\") {
      if (i + 1 >= line.length) return undefined;
      // A line continuation is no quoting: bash joins the line first.
      if (line[i + 1] !== "\n") {
        text += line[i + 1];
        quoted = true;
      }
      i += 2;
    } else if (quote === "'") {
      const from = i + (dollar ? 2 : 1);
      const close = line.indexOf("'", from);
      // `$'…\'…'` would need bash's own scan: not read.
      if (close < 0 || (dollar && line.slice(from, close).includes("\\"))) return undefined;
      text += line.slice(from, close);
      quoted = true;
      i = close + 1;
    } else if (quote === '"') {
      for (i += dollar ? 2 : 1; i < line.length && line[i] !== '"'; i++) {
        if (substitution(i)) return undefined;
        const escape = line[i] === "\\" && /[$`"\\\n]/.test(line[i + 1] ?? "");
        if (escape) i++;
        if (!escape || line[i] !== "\n") text += line[i];
      }
      if (i >= line.length) return undefined;
      quoted = true;
      i++;
    } else {
      text += c;
      i++;
    }
  }
  return { text, quoted, end: i };
}

// Whether the character at `i` is escaped: an odd run of backslashes before it.
function escapedAt(line: string, i: number): boolean {
  let n = 0;
  while (i - n - 1 >= 0 && line[i - n - 1] === "\\") n++;
  return n % 2 === 1;
}

/**
 * The line as bash joins it where a line continuation puts a `#` inside a word (`echo x\⏎#; rm`):
 * bash removes the backslash-newline first, so `x#` is a word and what follows runs; the grammar
 * reads a comment. After a blank or an operator (`x \⏎# c`) it is a comment for bash too. `)` may
 * end `$(…)`, inside a word, so it counts as a word's. Undefined when the line has no such `#`.
 */
export function joinedComments(root: Node, line: string): string | undefined {
  const cut = new Set<number>();
  for (const comment of root.descendantsOfType("comment")) {
    const pairs: number[] = [];
    let at = comment.startIndex;
    while (at >= 2 && line[at - 1] === "\n" && line[at - 2] === "\\" && !escapedAt(line, at - 2)) {
      at -= 2;
      pairs.push(at);
    }
    if (pairs.length === 0 || at === 0) continue;
    if (/[ \t\n;&|(<>]/.test(line[at - 1]) && !escapedAt(line, at - 1)) continue;
    for (const p of pairs) cut.add(p);
  }
  if (cut.size === 0) return undefined;
  let joined = "";
  for (let i = 0; i < line.length; i++) {
    if (cut.has(i)) i++;
    else joined += line[i];
  }
  return joined;
}
