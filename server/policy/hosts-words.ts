// What a dynamic shell word may become, for the host rules (hosts.ts). The shell analysis keeps
// a word it cannot value as its source text; some of those are only spelled oddly and have a
// value all the same (`$'evi\x6c.com'`, `evi{l,}.com`, `~/x`), and some hold literal text beside
// what is known at run time (`${H:-evil.com}`, `"http://$H/"`), which may name a host by itself.
// A here-document's body is read as bash expands it too (expandHereDocument). Anything this
// reader does not understand is reported as unknown, never guessed.

import { decodeAnsiC as ansiC } from "../shell/words";

/** The values a word may take, or `unknown` with the literal pieces it still shows. */
export interface Expansion {
  /** Every value the word expands to, when nothing of it waits for run time. */
  readonly values: readonly string[];
  /** Part of it is only known at run time (a variable, a substitution, a glob, …). */
  readonly unknown: boolean;
  /** Literal text of the word, defaults of `${x:-…}` included, with a space where a run-time
   *  part goes: for host names the word shows whether or not its value is known. */
  readonly fragments: readonly string[];
  /** It was dynamic only for a spelling read here (ANSI-C quotes, braces, `~`): its values stand. */
  readonly explained: boolean;
  /** Each value as far as it is known, with GAP where a run-time part goes: where a part lies
   *  says what it may become (`/dev/tcp/$H/80` may connect anywhere, `out/$F` is a file). */
  readonly shapes: readonly string[];
}

const MAX_VALUES = 256;
/** Stands for a run-time part in `fragments` and `shapes`. */
export const GAP = " ";

/**
 * `source`: a word as written. `assignment`: the value of `NAME=value`, where bash expands no
 * braces. The values are what bash would pass, up to how a tilde is spelled (a home folder is a
 * path, which names no host).
 */
export function expandWord(source: string, assignment = false): Expansion {
  const raws = assignment ? [source] : braces(source);
  if (!raws) return { values: [], unknown: true, fragments: [source], explained: false, shapes: [GAP] };
  let unknown = false;
  let explained = raws.length > 1 || (raws.length === 1 && raws[0] !== source);
  const values: string[] = [];
  const fragments: string[] = [];
  for (const raw of raws) {
    const d = decode(raw, assignment);
    unknown ||= d.unknown;
    explained ||= d.explained;
    values.push(d.text);
    fragments.push(d.text, ...d.defaults);
  }
  const shapes = values;
  return unknown
    ? { values: [], unknown, fragments, explained, shapes }
    : { values, unknown, fragments, explained, shapes };
}

/**
 * The body of a here-document whose delimiter is unquoted, as bash expands it: `$x`, `${…}`,
 * `$(…)`, `$((…))` and backquotes are run-time parts, a backslash escapes only `$`, `` ` ``,
 * `\` and a line break, and quotes, globs and braces are text.
 */
export function expandHereDocument(body: string): Expansion {
  const out: Decoded = { text: "", unknown: false, explained: false, defaults: [] };
  const gap = () => {
    out.text += GAP;
    out.unknown = true;
  };
  let i = 0;
  while (i < body.length) {
    const c = body[i];
    if (c === "\\" && /[$`\\\n]/.test(body[i + 1] ?? "")) {
      if (body[i + 1] !== "\n") out.text += body[i + 1];
      i += 2;
    } else if (c === "$" || c === "`") i = expansion(body, i, out, gap);
    else out.text += body[i++];
  }
  const fragments = [out.text, ...out.defaults];
  const shapes = [out.text];
  return out.unknown
    ? { values: [], unknown: true, fragments, explained: false, shapes }
    : { values: [out.text], unknown: false, fragments, explained: false, shapes };
}

// Brace expansion of a raw word: `a{b,c}d` → `abd`, `acd`; `{1..3}`; quoted or `${` braces are
// text. undefined when there would be too many words to read.
function braces(raw: string, depth = 0): string[] | undefined {
  if (depth > 8) return undefined;
  for (let i = 0; i < raw.length; i++) {
    const skip = quoted(raw, i);
    if (skip > i) {
      i = skip - 1;
      continue;
    }
    // `${…}` and `$(…)` are not brace expansion, nor is anything inside them.
    if (raw[i] === "$" && (raw[i + 1] === "{" || raw[i + 1] === "(")) {
      i = closing(raw, i + 1);
      continue;
    }
    if (raw[i] !== "{") continue;
    const close = matching(raw, i);
    if (close < 0) return [raw];
    const body = raw.slice(i + 1, close);
    const alternatives = split(body) ?? sequence(body);
    if (!alternatives) continue;
    const out: string[] = [];
    for (const alt of alternatives) {
      const more = braces(raw.slice(0, i) + alt + raw.slice(close + 1), depth + 1);
      if (!more || out.length + more.length > MAX_VALUES) return undefined;
      out.push(...more);
    }
    return out;
  }
  return [raw];
}

// Where a quoted piece or an escape starting at i ends (i itself when none starts there).
function quoted(raw: string, i: number): number {
  const c = raw[i];
  if (c === "\\") return i + 2;
  if (c === "'") return end(raw, i + 1, "'", false);
  if (c === '"') return end(raw, i + 1, '"', true);
  if (c === "$" && raw[i + 1] === "'") return end(raw, i + 2, "'", true);
  if (c === "$" && raw[i + 1] === '"') return end(raw, i + 2, '"', true);
  return i;
}

function end(raw: string, from: number, quote: string, escapes: boolean): number {
  for (let j = from; j < raw.length; j++) {
    if (escapes && raw[j] === "\\") j++;
    else if (raw[j] === quote) return j + 1;
  }
  return raw.length;
}

// The `}` closing the `{` at i, over nested braces and quotes; -1 when none.
function matching(raw: string, i: number): number {
  let depth = 0;
  for (let j = i; j < raw.length; j++) {
    const skip = quoted(raw, j);
    if (skip > j) {
      j = skip - 1;
      continue;
    }
    if (raw[j] === "{") depth++;
    else if (raw[j] === "}" && --depth === 0) return j;
  }
  return -1;
}

// `a,b{c,d}` → `a`, `b{c,d}`: commas at the top level only; undefined when there is none.
function split(body: string): string[] | undefined {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let j = 0; j < body.length; j++) {
    const skip = quoted(body, j);
    if (skip > j) {
      j = skip - 1;
      continue;
    }
    if (body[j] === "{") depth++;
    else if (body[j] === "}") depth--;
    else if (body[j] === "," && depth === 0) {
      parts.push(body.slice(from, j));
      from = j + 1;
    }
  }
  if (parts.length === 0) return undefined;
  parts.push(body.slice(from));
  return parts;
}

// `1..3`, `a..e`, `10..0..2`: the sequence, as bash spells it (zero-padded like its ends).
function sequence(body: string): string[] | undefined {
  const m = /^(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])(?:\.\.(-?\d+))?$/.exec(body);
  if (!m) return undefined;
  const numeric = /\d/.test(m[1]);
  if (numeric !== /\d/.test(m[2])) return undefined;
  const [from, to] = numeric ? [Number(m[1]), Number(m[2])] : [m[1].charCodeAt(0), m[2].charCodeAt(0)];
  const step = Math.abs(Number(m[3] ?? 1)) || 1;
  const count = Math.floor(Math.abs(to - from) / step) + 1;
  if (count > MAX_VALUES) return undefined;
  const width = numeric && /^-?0\d/.test(m[1] + " " + m[2]) ? Math.max(m[1].length, m[2].length) : 0;
  const out: string[] = [];
  for (let k = 0, v = from; k < count; k++, v += from <= to ? step : -step)
    out.push(numeric ? String(v).padStart(width, "0") : String.fromCharCode(v));
  return out;
}

interface Decoded {
  text: string;
  unknown: boolean;
  explained: boolean;
  defaults: string[];
}

// Quotes and escapes resolved; each run-time part becomes GAP and marks the word unknown.
function decode(raw: string, assignment: boolean): Decoded {
  const out: Decoded = { text: "", unknown: false, explained: false, defaults: [] };
  const gap = () => {
    out.text += GAP;
    out.unknown = true;
  };
  let i = 0;
  if (raw[0] === "~" || (assignment && /(^|:)~/.test(raw))) {
    // `~` and `~user` are a home folder: a path, whatever the name after it.
    out.explained = true;
  }
  while (i < raw.length) {
    const c = raw[i];
    if (c === "\\") {
      if (raw[i + 1] !== "\n") out.text += raw[i + 1] ?? "";
      i += 2;
    } else if (c === "'") {
      const j = end(raw, i + 1, "'", false);
      out.text += raw.slice(i + 1, j - 1);
      i = j;
    } else if (c === "$" && raw[i + 1] === "'") {
      const j = end(raw, i + 2, "'", true);
      out.text += ansiC(raw.slice(i + 2, j - 1));
      out.explained = true;
      i = j;
    } else if (c === '"' || (c === "$" && raw[i + 1] === '"')) {
      i = doubleQuoted(raw, i + (c === "$" ? 2 : 1), out, gap);
    } else if (c === "$" || c === "`") {
      i = expansion(raw, i, out, gap);
    } else if (c === "~" && (i === 0 || (assignment && raw[i - 1] === ":"))) {
      out.text += "/~";
      i++;
      while (i < raw.length && /[\w.-]/.test(raw[i])) i++;
    } else if (/[*?[]/.test(c) || /[\s<>()|&;]/.test(c)) {
      // A glob matches file names; the rest cannot be in a plain word (`<(…)`, `<input of xargs>`).
      gap();
      i++;
    } else {
      out.text += c;
      i++;
    }
  }
  return out;
}

function doubleQuoted(raw: string, from: number, out: Decoded, gap: () => void): number {
  let i = from;
  while (i < raw.length && raw[i] !== '"') {
    if (raw[i] === "\\" && /[$`"\\\n]/.test(raw[i + 1] ?? "")) {
      if (raw[i + 1] !== "\n") out.text += raw[i + 1];
      i += 2;
    } else if (raw[i] === "$" || raw[i] === "`") {
      i = expansion(raw, i, out, gap);
    } else out.text += raw[i++];
  }
  return i + 1;
}

// `$name`, `${…}`, `$(…)`, `$((…))`, `` `…` ``: a run-time part. The word of `${x:-word}` (and
// `-`, `=`, `:=`, `+`, `:+`, `?`) or the replacement of `${x/a/word}` may be the value, so it is
// read as a fragment too.
const OPERAND = /^[#!]?(?:[A-Za-z_]\w*|\d+|[@*#?$!-])(?:\[[^\]]*\])?(?::?[-=+?]|\/[/#%]?|##?|%%?|\^\^?|,,?|:)(.*)$/s;
function expansion(raw: string, i: number, out: Decoded, gap: () => void): number {
  const next = raw[i + 1] ?? "";
  if (raw[i] === "`") {
    gap();
    return end(raw, i + 1, "`", true);
  }
  if (next === "{" || next === "(" || next === "[") {
    const close = closing(raw, i + 1);
    if (next === "{") {
      const m = OPERAND.exec(raw.slice(i + 2, close));
      if (m) {
        const inner = decode(m[1], false);
        out.defaults.push(inner.text, ...inner.defaults);
      }
    }
    gap();
    return close + 1;
  }
  if (/[\w@*#?$!-]/.test(next)) {
    gap();
    let j = i + 1;
    if (/[a-zA-Z_]/.test(next)) while (j < raw.length && /\w/.test(raw[j])) j++;
    else j++;
    return j;
  }
  out.text += "$";
  return i + 1;
}

// The bracket closing the one at `open` (`{`, `(` or `[`), over nesting and quotes; the end of
// the text when it is not closed.
function closing(raw: string, open: number): number {
  const pair: Record<string, string> = { "{": "}", "(": ")", "[": "]" };
  const o = raw[open];
  const c = pair[o];
  let depth = 0;
  for (let j = open; j < raw.length; j++) {
    const skip = quoted(raw, j);
    if (skip > j) {
      j = skip - 1;
      continue;
    }
    if (raw[j] === o) depth++;
    else if (raw[j] === c && --depth === 0) return j;
  }
  return raw.length;
}
