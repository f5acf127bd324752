// Character-level helpers of the repairing scanner (json.ts): the output buffer, finding where a
// string ends without walking it a character at a time, and finishing what a cut left half-done.

export const QUOTE = 34,
  BACKSLASH = 92,
  COMMA = 44,
  COLON = 58;
export const LBRACE = 123,
  RBRACE = 125,
  LBRACKET = 91,
  RBRACKET = 93;

export function isSpace(c: number) {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

export function isTokenChar(c: number) {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 45 || c === 43 || c === 46;
}

/** The repaired text being written. */
export class Out {
  private s = "";
  get length() {
    return this.s.length;
  }
  push(piece: string) {
    this.s += piece;
  }
  /** Cuts the output back to `length` characters. */
  truncate(length: number) {
    if (this.s.length > length) this.s = this.s.slice(0, length);
  }
  text() {
    return this.s;
  }
}

/** Index of the quote closing the string whose body starts at `bodyStart`, or -1 when the text
 *  is cut inside it. indexOf runs natively; only the backslashes just before a quote are walked. */
export function closingQuote(src: string, bodyStart: number): number {
  let q = src.indexOf('"', bodyStart);
  while (q >= 0 && backslashesBefore(src, q, bodyStart) % 2 === 1) q = src.indexOf('"', q + 1);
  return q;
}

export function backslashesBefore(src: string, at: number, bodyStart: number): number {
  let k = 0;
  while (at - k - 1 >= bodyStart && src.charCodeAt(at - k - 1) === BACKSLASH) k++;
  return k;
}

const CONTROL = /[\x00-\x1f]/g;
const BACKSLASH_CONTROL = /\\[\x00-\x1f]/g;

/** Index of the first raw control character at or after `from`, or src.length. */
export function nextControl(src: string, from: number): number {
  CONTROL.lastIndex = from;
  return CONTROL.test(src) ? CONTROL.lastIndex - 1 : src.length;
}

/** Index of the first backslash followed by a control character at or after `from`, or
 *  src.length. It may be an escaped backslash: a false alarm only takes the careful path. */
export function nextBackslashControl(src: string, from: number): number {
  BACKSLASH_CONTROL.lastIndex = from;
  return BACKSLASH_CONTROL.test(src) ? BACKSLASH_CONTROL.lastIndex - 2 : src.length;
}

const CONTROL_ESCAPES: Record<number, string> = { 10: "\\n", 13: "\\r", 9: "\\t", 8: "\\b", 12: "\\f" };

/** Writes src[last, end) with its raw control characters escaped (those after a backslash are
 *  left for the parser to refuse); returns the new `last`. */
export function escapeControls(src: string, from: number, end: number, last: number, out: Out): number {
  for (let j = from; j < end; j++) {
    const d = src.charCodeAt(j);
    if (d === BACKSLASH) j++;
    else if (d < 32) {
      out.push(src.slice(last, j));
      out.push(CONTROL_ESCAPES[d] ?? "");
      last = j + 1;
    }
  }
  return last;
}

/** How many characters at the end of a cut string body are a partial escape (`\`, `\u12`). */
export function partialEscapeLength(src: string, end: number, bodyStart: number): number {
  for (let k = 2; k <= 5 && end - k >= bodyStart; k++) {
    const at = end - k;
    if (
      src.charCodeAt(at) === BACKSLASH &&
      src.charCodeAt(at + 1) === 117 &&
      /^[0-9a-fA-F]*$/.test(src.slice(at + 2, end))
    ) {
      if (backslashesBefore(src, at, bodyStart) % 2 === 0) return k;
      break;
    }
  }
  return end > bodyStart &&
    src.charCodeAt(end - 1) === BACKSLASH &&
    backslashesBefore(src, end - 1, bodyStart) % 2 === 0
    ? 1
    : 0;
}

const LITERALS = ["true", "false", "null"];

/** Completes a cut number or literal, or undefined when it cannot be completed faithfully. */
export function completeToken(token: string): string | undefined {
  for (const lit of LITERALS) if (lit.startsWith(token)) return lit;
  const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(token);
  return m && m[0].length > 0 && m[0] !== "-" ? m[0] : undefined;
}
