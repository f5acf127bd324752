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
