// Secret values in shell text (~/.bashrc, a script in a PATH folder of the home), for
// home-redact.ts: assignments to a variable named like a secret in every spelling bash takes
// (`export`, `declare -g`, `local`, `readonly`, `export -n`, arrays, `+=`, aliases' and `eval`'s
// strings, values with `${X:-a b}` or `$'…'`, `${TOKEN:=…}` and `${TOKEN:-…}`), `printf -v NAME …`, `read`/`mapfile` into such a
// name from a here-string or a here-document, and every here-document's body as data (its
// `key = value` lines too). The rest is left byte for byte, so the shell still reads it.
import { isSecretName } from "./env";

export const REDACTED = "QUIVER-REDACTED";

/** A shell assignment: `X=`, `export  X=`, `declare -x X=`, `a=1 X+=`, `X[0]=`. */
const ASSIGNMENT = /(^|[\s;&|(`'"])([A-Za-z_][A-Za-z0-9_]*)(\[[^\]\n]*\])?\+?=/g;
const PRINTF_V = /\bprintf\s+(?:-[^\sv-]\S*\s+)*-v\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)(\[[^\]\n]*\])?\1/g;
/** `${NAME:=value}`, `${NAME-value}`…: a default or an assignment inside an expansion. */
const EXPANSION = /\$\{([A-Za-z_][A-Za-z0-9_]*)(:?[-=+?])/g;
const READS = /(^|[\s;&|(`{])(read|mapfile|readarray)(?=[\s;&|)]|$)/g;

/** Where the closing `close` of what opens at `i` is (quotes and escapes inside skipped). */
function closing(text: string, i: number, open: string, close: string): number {
  let depth = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "\\") i += 2;
    else if (c === "'" && open === "{") i = skipQuote(text, i);
    else if (c === '"') i = skipDouble(text, i);
    else {
      if (c === open) depth++;
      else if (c === close && --depth === 0) return i + 1;
      i++;
    }
  }
  return text.length;
}

const skipQuote = (text: string, i: number) => {
  const close = text.indexOf(text[i], i + 1);
  return close < 0 ? text.length : close + 1;
};

function skipDouble(text: string, i: number): number {
  for (i++; i < text.length && text[i] !== '"';) i += text[i] === "\\" ? 2 : 1;
  return i + 1;
}

/**
 * Where the shell word starting at `i` ends (quotes, escapes, line continuations, `$(…)`,
 * `${…}`, `$'…'`); inside a quoted string (`alias x='TOKEN=… cmd'`) also at its closing quote.
 */
export function wordEnd(text: string, i: number, within?: string): number {
  let depth = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === within && depth === 0) return i;
    if (c === "\\") i += 2;
    else if (c === "$" && text[i + 1] === "{") i = closing(text, i + 1, "{", "}");
    else if (c === "$" && text[i + 1] === "'") {
      for (i += 2; i < text.length && text[i] !== "'";) i += text[i] === "\\" ? 2 : 1;
      i++;
    } else if (c === "'" || c === "`") i = skipQuote(text, i);
    else if (c === '"') i = skipDouble(text, i);
    else if (c === "(") {
      depth++;
      i++;
    } else if (c === ")" && depth > 0) {
      depth--;
      i++;
    } else if (depth === 0 && /[\s;&|<>)]/.test(c)) return i;
    else i++;
  }
  return Math.min(i, text.length);
}

/** Where the simple command whose words continue at `i` ends (redirections included). */
function commandEnd(text: string, i: number, words: string[] = []): number {
  for (;;) {
    while (/[ \t]/.test(text[i] ?? "") || text.startsWith("\\\n", i)) i += text[i] === "\\" ? 2 : 1;
    if (i >= text.length || /[;&|\n)#]/.test(text[i])) return i;
    if (/[<>]/.test(text[i])) {
      while (/[<>&|-]/.test(text[i] ?? "")) i++;
      continue;
    }
    const end = Math.max(wordEnd(text, i), i + 1);
    words.push(text.slice(i, end).replace(/['"\\]/g, ""));
    i = end;
  }
}

interface Body {
  /** The `<<` that opened it, the body's first character and the start of its delimiter line. */
  op: number;
  start: number;
  end: number;
}

/**
 * The here-documents' bodies, and where quotes and comments are (0 code, 1 in '…', 2 in "…"),
 * read as bash reads them, well enough to find each body's end (`$((1<<2))` is no here-document).
 */
function lex(text: string): { bodies: Body[]; quote: Uint8Array } {
  const quote = new Uint8Array(text.length);
  const bodies: Body[] = [];
  let pending: { op: number; delim: string; strip: boolean }[] = [];
  let i = 0;
  const mark = (from: number, to: number, q: number) => quote.fill(q, from, Math.min(to, text.length));
  while (i < text.length) {
    const c = text[i];
    if (c === "\\") i += 2;
    else if (c === "'" || (c === "$" && text[i + 1] === "'")) {
      const from = i;
      i = c === "'" ? skipQuote(text, i) : wordEnd(text, i);
      mark(from + 1, i - 1, 1);
    } else if (c === '"') {
      const from = i;
      i = skipDouble(text, i);
      mark(from + 1, i - 1, 2);
    } else if (text.startsWith("((", i)) i = closing(text, i, "(", ")");
    else if (c === "#" && (i === 0 || /[\s;&|(]/.test(text[i - 1]))) {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (text.startsWith("<<<", i)) i += 3;
    else if (text.startsWith("<<", i)) {
      let j = i + 2;
      const strip = text[j] === "-";
      if (strip) j++;
      while (text[j] === " " || text[j] === "\t") j++;
      const end = wordEnd(text, j);
      const delim = text.slice(j, end).replace(/['"\\]/g, "");
      if (delim) pending.push({ op: i, delim, strip });
      i = Math.max(end, i + 2);
    } else if (c === "\n" && pending.length) {
      i++;
      for (const p of pending) {
        const start = i;
        for (;;) {
          const eol = text.indexOf("\n", i);
          const line = text.slice(i, eol < 0 ? text.length : eol);
          if ((p.strip ? line.replace(/^\t+/, "") : line) === p.delim) {
            bodies.push({ op: p.op, start, end: i });
            i = eol < 0 ? text.length : eol + 1;
            break;
          }
          if (eol < 0) {
            bodies.push({ op: p.op, start, end: text.length });
            i = text.length;
            break;
          }
          i = eol + 1;
        }
      }
      pending = [];
    } else i++;
  }
  return { bodies, quote };
}

/** `text` with secret values replaced; `data` redacts a here-document's body (key = value lines). */
export function redactShell(text: string, data: (body: string) => string = (b) => b): string {
  const { bodies, quote } = lex(text);
  // Bodies blanked (newlines kept) so no assignment or quote in them is read as code.
  const chars = [...text];
  for (const b of bodies) for (let k = b.start; k < b.end; k++) if (chars[k] !== "\n") chars[k] = " ";
  const code = chars.length === text.length ? chars.join("") : text;
  const cuts: { from: number; to: number; by: string }[] = [];
  // A name inside a quoted string (an alias, `eval "…"`) has a value that ends with that string.
  const within = (at: number) => (quote[at] === 1 ? "'" : quote[at] === 2 ? '"' : undefined);
  ASSIGNMENT.lastIndex = 0;
  for (let m = ASSIGNMENT.exec(code); m; m = ASSIGNMENT.exec(code)) {
    const start = m.index + m[0].length;
    if (!isSecretName(m[2])) {
      ASSIGNMENT.lastIndex = start;
      continue;
    }
    const at = m.index + m[1].length;
    const end = wordEnd(code, start, within(at) ?? (/['"`]/.test(m[1]) ? m[1] : undefined));
    cuts.push({ from: start, to: end, by: REDACTED });
    ASSIGNMENT.lastIndex = Math.max(end, start);
  }
  PRINTF_V.lastIndex = 0;
  for (let m = PRINTF_V.exec(code); m; m = PRINTF_V.exec(code)) {
    const start = m.index + m[0].length;
    if (isSecretName(m[2])) cuts.push({ from: start, to: commandEnd(code, start), by: ` ${REDACTED}` });
  }
  EXPANSION.lastIndex = 0;
  for (let m = EXPANSION.exec(code); m; m = EXPANSION.exec(code)) {
    const start = m.index + m[0].length;
    const end = closing(code, m.index + 1, "{", "}") - 1;
    if (isSecretName(m[1]) && end > start) cuts.push({ from: start, to: end, by: REDACTED });
  }
  // read/mapfile into a secret name: what it reads, a here-string's word or a here-document's body.
  const secretReads: [number, number][] = [];
  READS.lastIndex = 0;
  for (let m = READS.exec(code); m; m = READS.exec(code)) {
    const start = m.index + m[0].length;
    const words: string[] = [];
    const end = commandEnd(code, start, words);
    if (!words.some((w) => /^[A-Za-z_]\w*$/.test(w) && isSecretName(w))) continue;
    secretReads.push([m.index, end]);
    for (let h = code.indexOf("<<<", start); h >= 0 && h < end; h = code.indexOf("<<<", h + 3)) {
      let w = h + 3;
      while (code[w] === " " || code[w] === "\t") w++;
      cuts.push({ from: w, to: wordEnd(code, w), by: REDACTED });
    }
  }
  for (const b of bodies) {
    const read = secretReads.some(([from, to]) => b.op >= from && b.op < to);
    cuts.push({ from: b.start, to: b.end, by: read ? `${REDACTED}\n` : data(text.slice(b.start, b.end)) });
  }
  // Outermost first: a cut inside another (a body inside `TOKEN=$(cat <<EOF …)`) goes with it.
  cuts.sort((a, b) => a.from - b.from || b.to - a.to);
  let out = "";
  let last = 0;
  for (const c of cuts) {
    if (c.from < last) continue;
    out += text.slice(last, c.from) + c.by;
    last = c.to;
  }
  return out + text.slice(last);
}
