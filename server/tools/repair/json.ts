// The repairing scanner behind the argument ladder: one pass over damaged JSON that applies
// exactly the rungs the text needs (control characters in strings, trailing commas, unclosed
// strings and brackets, surplus closers) and reports which. Cut-off values are completed only
// when the completion keeps what was written (a string is closed, `tru` becomes `true`); a key
// with no value is dropped rather than guessed, so validation reports it missing.
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

/** Returns repaired JSON text, or undefined when the text is not an object at its root. */
export function repairJson(text: string): { text: string; repairs: number } | undefined {
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
      i++;
      bodyStart = i;
      while (i < n) {
        const d = src.charCodeAt(i);
        if (d === QUOTE) break;
        if (d === BACKSLASH) {
          i += 2;
          continue;
        }
        if (d < 32) {
          out.push(src.slice(last, i));
          out.push(CONTROL_ESCAPES[d] ?? "");
          last = i + 1;
          repairs |= CONTROL_CHARS;
        }
        i++;
      }
      if (i >= n) break; // cut inside the string
      inString = false;
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
    return { text: out.parts.join(""), repairs };
  }

  // Cut off: finish or drop what was being written, then close every open container.
  repairs |= CLOSED_BRACKETS;
  const top = stack[stack.length - 1];
  if (inString) {
    if (stringIsKey) out.truncate(top.memberStart);
    else {
      out.push(src.slice(last, n - partialEscapeLength(src, n, bodyStart)));
      out.push('"');
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
  return { text: out.parts.join(""), repairs };
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
