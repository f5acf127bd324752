// The repairing scanner behind the argument ladder: one pass over damaged JSON that applies
// exactly the rungs the text needs (control characters in strings, trailing commas, unclosed
// strings and brackets, surplus closers) and reports which. Cut-off values are completed only
// when the completion keeps what was written (a string is closed, `tru` becomes `true`); a key
// with no value is dropped rather than guessed, so validation reports it missing.
import { BIG_STRING, type BigString, placeholder } from "./big";
import {
  closingQuote,
  COLON,
  COMMA,
  completeToken,
  escapeControls,
  isSpace,
  isTokenChar,
  LBRACE,
  LBRACKET,
  nextBackslashControl,
  nextControl,
  Out,
  partialEscapeLength,
  QUOTE,
  RBRACE,
  RBRACKET,
} from "./text";

export { isSpace, RBRACE } from "./text";

/** Bit flags of the rungs applied, in ladder order (a Set per call costs more than the scan). */
export const CONTROL_CHARS = 1,
  TRAILING_COMMAS = 2,
  CLOSED_BRACKETS = 4,
  SURPLUS_CLOSERS = 8;

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
  let inString = false;
  let tokenStart = -1;
  const str: Str = { isKey: false, start: 0, markLast: 0, markOut: 0, ctrl: false, ctrlAfterEscape: false };
  let bigs: BigStrings | undefined;
  // Where the next raw control character (or backslash before one) is: found natively, once
  // for every stretch of text rather than once per string.
  let nextCtrl = -1,
    nextEscapedCtrl = -1;

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
      str.isKey = top.state === S.ObjStart || top.state === S.Key;
      str.start = i;
      str.markLast = last;
      str.markOut = out.length;
      const bodyStart = i + 1;
      const q = closingQuote(src, bodyStart);
      const end = q < 0 ? n : q;
      if (nextCtrl < bodyStart) nextCtrl = nextControl(src, bodyStart);
      str.ctrl = nextCtrl < end;
      if (str.ctrl && nextEscapedCtrl < bodyStart) nextEscapedCtrl = nextBackslashControl(src, bodyStart);
      str.ctrlAfterEscape = str.ctrl && nextEscapedCtrl < end;
      if (q < 0) {
        inString = true; // cut inside the string
        break;
      }
      if (str.ctrl) repairs |= CONTROL_CHARS;
      if (!str.isKey && q - i >= BIG_STRING && (bigs ??= new BigStrings(src)).take(str, q, true, out)) last = q + 1;
      else if (str.ctrl) last = escapeControls(src, bodyStart, q, last, out);
      i = q + 1;
      top.state = str.isKey ? S.Colon : S.After;
      continue;
    }
    if (c === LBRACE || c === LBRACKET) {
      out.push(src.slice(last, i + 1));
      last = i + 1;
      stack.push({
        closer: c === LBRACE ? RBRACE : RBRACKET,
        state: c === LBRACE ? S.ObjStart : S.ArrStart,
        memberStart: out.length,
      });
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
    return { text: out.text(), repairs, bigs: bigs?.list };
  }

  // Cut off: finish or drop what was being written, then close every open container.
  repairs |= CLOSED_BRACKETS;
  const top = stack[stack.length - 1];
  if (inString) {
    if (str.isKey) out.truncate(top.memberStart);
    else {
      const bodyStart = str.start + 1;
      const end = n - partialEscapeLength(src, n, bodyStart);
      if (str.ctrl) repairs |= CONTROL_CHARS;
      if (!(end - str.start >= BIG_STRING && (bigs ??= new BigStrings(src)).take(str, end, false, out))) {
        if (str.ctrl) last = escapeControls(src, bodyStart, end, last, out);
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
  return { text: out.text(), repairs, bigs: bigs?.list };
}

function closerOf(f: Frame): string {
  return f.closer === RBRACE ? "}" : "]";
}

/** The string value being scanned: where it began, and where output stood before it. */
interface Str {
  isKey: boolean;
  start: number;
  markLast: number;
  markOut: number;
  /** The body holds a raw control character (and one may follow a backslash). */
  ctrl: boolean;
  ctrlAfterEscape: boolean;
}

/** The long string values of one text that are parsed out of band (big.ts). */
class BigStrings {
  list: BigString[] | undefined;
  /** A placeholder is recognised after parsing only if the text holds no `\u0000` escape. */
  private readonly safe: boolean;
  constructor(private readonly src: string) {
    this.safe = src.indexOf("\\u0000") < 0;
  }
  /** Replaces the string `s`, ending at `end`, with a placeholder; false when it must stay inline. */
  take(s: Str, end: number, closed: boolean, out: Out): boolean {
    if (!this.safe || s.ctrlAfterEscape) return false;
    out.truncate(s.markOut);
    out.push(this.src.slice(s.markLast, s.start));
    this.list ??= [];
    out.push(placeholder(this.list.length));
    this.list.push({ start: s.start + 1, end, intact: closed && !s.ctrl });
    return true;
  }
}
