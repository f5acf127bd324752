// The repairing scanner behind the argument ladder: one pass over damaged JSON that applies
// exactly the rungs the text needs (control characters in strings, trailing commas, unclosed
// strings and brackets, surplus closers) and reports which. Cut-off values are completed only
// when the completion keeps what was written (a string is closed, `tru` becomes `true`); a key
// with no value is dropped rather than guessed, so validation reports it missing.
import { BIG_STRING, type BigString, placeholder } from "./big";

/** Bit flags of the rungs applied, in ladder order (a Set per call costs more than the scan). */
export const CONTROL_CHARS = 1, TRAILING_COMMAS = 2, CLOSED_BRACKETS = 4, SURPLUS_CLOSERS = 8;

const enum S {
  /** object: expecting a key or `}` (right after `{`) */
  ObjStart,
  /** object: expecting a key (after a comma) */
  Key,
  /** object: a key was read, expecting `:` */
  Colon,
  /** object or array: expecting a value */
  Value,
  /** array: expecting a value or `]` (right after `[`) */
  ArrStart,
  /** after a complete value: expecting `,` or a closer */
  After,
}

interface Frame {
  closer: number;
  state: S;
  /** Output offset where the current member began (before its comma): where a cut-off member is dropped. */
  memberStart: number;
}

const QUOTE = 34, BACKSLASH = 92, COMMA = 44, COLON = 58;
export const RBRACE = 125;
const LBRACE = 123, LBRACKET = 91, RBRACKET = 93;

export function isSpace(c: number) {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

function isTokenChar(c: number) {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 45 || c === 43 || c === 46;
}

const CONTROL_ESCAPES: Record<number, string> = { 10: "\\n", 13: "\\r", 9: "\\t", 8: "\\b", 12: "\\f" };

/** Output as flat pieces joined once: string concatenation would build ropes that V8 flattens slowly. */
class Out {
  parts: string[] = [];
  length = 0;
  push(s: string) {
    if (s.length === 0) return;
    this.parts.push(s);
    this.length += s.length;
  }
  /** Cuts the output back to `length` characters. */
  truncate(length: number) {
    while (this.length > length) {
      const piece = this.parts.pop()!;
      this.length -= piece.length;
      if (this.length < length) this.push(piece.slice(0, length - this.length));
    }
  }
}

export interface Repaired {
  text: string;
  repairs: number;
  /** Long string values left out of `text` as placeholders (big.ts), or undefined. */
  bigs: BigString[] | undefined;
}

/** Returns repaired JSON text, or undefined when the text is not an object at its root. */
export function repairJson(text: string): Repaired | undefined {
  const src = text;
  let repairs = 0;
  const n = src.length;
  let i = 0;
  while (i < n && isSpace(src.charCodeAt(i))) i++;
  if (src.charCodeAt(i) !== LBRACE) return undefined;

  const out = new Out();
  let last = 0; // src[last, i) is still to be copied into out
  const stack: Frame[] = [];
  let pendingComma = false;
  let done = false; // the root object has closed
  let inString = false, stringIsKey = false, bodyStart = 0;
  let tokenStart = -1;
  let bigs: BigString[] | undefined;
  // -1: not yet asked (most calls have no long string); 0/1: whether placeholders are safe
  let bigOk = -1;
  let strStart = 0, markLast = 0, markOut = 0, ctrl = false, ctrlAfterEscape = false;
  /** Replaces the string that began at strStart with a placeholder, if it is a long value. */
  const outOfBand = (end: number, closed: boolean): boolean => {
    if (stringIsKey || end - strStart < BIG_STRING || ctrlAfterEscape) return false;
    if (bigOk < 0) bigOk = src.indexOf("\\u0000") < 0 ? 1 : 0;
    if (bigOk === 0) return false;
    out.truncate(markOut);
    out.push(src.slice(markLast, strStart));
    bigs ??= [];
    out.push(placeholder(bigs.length));
    bigs.push({ start: strStart + 1, end, intact: closed && !ctrl });
    return true;
  };

  while (i < n) {
    const c = src.charCodeAt(i);
    if (done) {
      if (c === RBRACE || c === RBRACKET) {
        out.push(src.slice(last, i));
        last = i + 1;
        repairs |= SURPLUS_CLOSERS;
      } else if (!isSpace(c)) {
        break; // trailing garbage: copied as is, for the parser to refuse
      }
      i++;
      continue;
    }
    if (isSpace(c)) {
      i++;
      continue;
    }
    const top = stack[stack.length - 1];
    if (c === RBRACE || c === RBRACKET) {
      if (pendingComma) {
        pendingComma = false;
        repairs |= TRAILING_COMMAS;
      }
      let depth = stack.length - 1;
      while (depth >= 0 && stack[depth].closer !== c) depth--;
      if (depth < 0) {
        out.push(src.slice(last, i)); // closes nothing that is open: a surplus closer
        last = i + 1;
        repairs |= SURPLUS_CLOSERS;
        i++;
        continue;
      }
      if (depth < stack.length - 1) {
        // closes an outer container: close the inner ones it skipped first
        out.push(src.slice(last, i));
        last = i;
        while (stack.length - 1 > depth) out.push(closerOf(stack.pop()!));
        repairs |= CLOSED_BRACKETS;
      }
      stack.pop();
      i++;
      if (stack.length === 0) done = true;
      else stack[stack.length - 1].state = S.After;
      continue;
    }
    if (c === COMMA) {
      out.push(src.slice(last, i));
      last = i + 1;
      if (top.state === S.After) {
        top.memberStart = out.length;
        top.state = top.closer === RBRACE ? S.Key : S.Value;
        pendingComma = true;
      } else {
        repairs |= TRAILING_COMMAS; // a doubled or leading comma
      }
      i++;
      continue;
    }
    if (c === COLON) {
      if (top.state === S.Colon) top.state = S.Value;
      i++;
      continue;
    }
    // a value or key starts here: the comma held back before it is written now
    if (pendingComma && (c === QUOTE || c === LBRACE || c === LBRACKET || isTokenChar(c))) {
      out.push(src.slice(last, i));
      out.push(",");
      last = i;
      pendingComma = false;
    }
    if (c === QUOTE) {
      stringIsKey = top.state === S.ObjStart || top.state === S.Key;
      inString = true;
      strStart = i;
      markLast = last;
      markOut = out.length;
      ctrl = ctrlAfterEscape = false;
      i++;
      bodyStart = i;
      while (i < n) {
        const d = src.charCodeAt(i);
        if (d === QUOTE) break;
        if (d === BACKSLASH) {
          if (src.charCodeAt(i + 1) < 32) ctrlAfterEscape = true;
          i += 2;
          continue;
        }
        // escaped later, once the string is known not to go out of band: a long content
        // string with raw newlines would otherwise be cut into pieces only to be dropped
        if (d < 32) ctrl = true;
        i++;
      }
      if (i >= n) break; // cut inside the string
      inString = false;
      if (ctrl) repairs |= CONTROL_CHARS;
      if (outOfBand(i, true)) last = i + 1;
      else if (ctrl) last = escapeControls(src, bodyStart, i, last, out);
      i++;
      top.state = stringIsKey ? S.Colon : S.After;
      continue;
    }
    if (c === LBRACE || c === LBRACKET) {
      out.push(src.slice(last, i + 1));
      last = i + 1;
      stack.push({ closer: c === LBRACE ? RBRACE : RBRACKET, state: c === LBRACE ? S.ObjStart : S.ArrStart, memberStart: out.length });
      i++;
      continue;
    }
    if (isTokenChar(c)) {
      tokenStart = i;
      while (i < n && isTokenChar(src.charCodeAt(i))) i++;
      if (i >= n) break; // cut inside a number or literal
      tokenStart = -1;
      top.state = S.After;
      continue;
    }
    i++; // anything else is copied; the parser decides
  }

  if (done) {
    out.push(src.slice(last));
    return { text: out.parts.join(""), repairs, bigs };
  }

  // Cut off: finish or drop what was being written, then close every open container.
  repairs |= CLOSED_BRACKETS;
  const top = stack[stack.length - 1];
  if (inString) {
    if (stringIsKey) out.truncate(top.memberStart);
    else {
      const end = n - partialEscapeLength(src, n, bodyStart);
      if (ctrl) repairs |= CONTROL_CHARS;
      if (!outOfBand(end, false)) {
        if (ctrl) last = escapeControls(src, bodyStart, end, last, out);
        out.push(src.slice(last, end));
        out.push('"');
      }
      top.state = S.After;
    }
  } else if (tokenStart >= 0) {
    const completed = completeToken(src.slice(tokenStart, n));
    if (completed === undefined) out.truncate(top.memberStart);
    else {
      out.push(src.slice(last, tokenStart));
      out.push(completed);
      top.state = S.After;
    }
  } else out.push(src.slice(last, n));
  if (top.state === S.Colon || (top.state === S.Value && top.closer === RBRACE)) out.truncate(top.memberStart);
  for (let d = stack.length - 1; d >= 0; d--) out.push(closerOf(stack[d]));
  return { text: out.parts.join(""), repairs, bigs };
}

/** Writes src[last, end) with its raw control characters escaped (those after a backslash are
 *  left for the parser to refuse); returns the new `last`. */
function escapeControls(src: string, from: number, end: number, last: number, out: Out): number {
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

function closerOf(f: Frame): string {
  return f.closer === RBRACE ? "}" : "]";
}

/** How many characters at the end of a cut string body are a partial escape (`\`, `\u12`). */
function partialEscapeLength(src: string, end: number, bodyStart: number): number {
  for (let k = 2; k <= 5 && end - k >= bodyStart; k++) {
    const at = end - k;
    if (src.charCodeAt(at) === BACKSLASH && src.charCodeAt(at + 1) === 117 && /^[0-9a-fA-F]*$/.test(src.slice(at + 2, end))) {
      if (backslashesBefore(src, at, bodyStart) % 2 === 0) return k;
      break;
    }
  }
  return end > bodyStart && src.charCodeAt(end - 1) === BACKSLASH && backslashesBefore(src, end - 1, bodyStart) % 2 === 0 ? 1 : 0;
}

function backslashesBefore(src: string, at: number, bodyStart: number): number {
  let k = 0;
  while (at - k - 1 >= bodyStart && src.charCodeAt(at - k - 1) === BACKSLASH) k++;
  return k;
}

const LITERALS = ["true", "false", "null"];

/** Completes a cut number or literal, or undefined when it cannot be completed faithfully. */
function completeToken(token: string): string | undefined {
  for (const lit of LITERALS) if (lit.startsWith(token)) return lit;
  const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(token);
  return m && m[0].length > 0 && m[0] !== "-" ? m[0] : undefined;
}
