// The argument ladder: turns the argument JSON a model streamed, possibly cut off or damaged,
// into an object. Rungs, in order: strict parse → raw control characters inside strings →
// trailing commas → close unclosed strings/brackets → drop surplus closers. Each rung only
// ever fires on text that is not valid JSON, so one scanning pass applies exactly the rungs a
// text needs and reports them in ladder order. Cut-off values are completed only when the
// completion keeps what was written (a string is closed, `tru` becomes `true`); a key with no
// value is dropped rather than guessed, so validation reports it missing.

export type Rung = "control_chars" | "trailing_commas" | "closed_brackets" | "surplus_closers";
export const RUNGS: readonly Rung[] = ["control_chars", "trailing_commas", "closed_brackets", "surplus_closers"];

export const MAX_ARGUMENT_BYTES = 1024 * 1024;

export type ArgumentsResult =
  | { ok: true; value: Record<string, unknown>; repairs: Rung[] }
  | { ok: false; reason: "too_large" | "unparseable" | "not_object"; message: string };

export interface ArgumentOptions {
  /** Strict parse only: the turn was cut at the output limit, so nothing is guessed. */
  strict?: boolean;
}

function byteLength(s: string): number {
  // Cheap bound first: a UTF-16 unit is at most 3 UTF-8 bytes.
  if (s.length * 3 <= MAX_ARGUMENT_BYTES) return s.length;
  return Buffer.byteLength(s, "utf8");
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

export function parseArguments(raw: string, options: ArgumentOptions = {}): ArgumentsResult {
  const size = byteLength(raw);
  if (size > MAX_ARGUMENT_BYTES) {
    return { ok: false, reason: "too_large", message: `arguments are ${size} bytes, above the ${MAX_ARGUMENT_BYTES}-byte limit` };
  }
  // Providers send "" for a call without arguments.
  if (raw.trim() === "") return { ok: true, value: {}, repairs: [] };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    if (options.strict) return { ok: false, reason: "unparseable", message: "arguments are not valid JSON" };
    const repaired = repairJson(raw);
    if (!repaired) return { ok: false, reason: "unparseable", message: "arguments are not valid JSON and could not be repaired" };
    try {
      value = JSON.parse(repaired.text);
    } catch {
      return { ok: false, reason: "unparseable", message: "arguments are not valid JSON and could not be repaired" };
    }
    if (!isObject(value)) return { ok: false, reason: "not_object", message: "arguments must be a JSON object" };
    return { ok: true, value, repairs: RUNGS.filter((r) => repaired.repairs.has(r)) };
  }
  if (!isObject(value)) return { ok: false, reason: "not_object", message: "arguments must be a JSON object" };
  return { ok: true, value, repairs: [] };
}

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
const LBRACE = 123, RBRACE = 125, LBRACKET = 91, RBRACKET = 93;

function isSpace(c: number) {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

function isTokenChar(c: number) {
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 45 || c === 43 || c === 46;
}

const CONTROL_ESCAPES: Record<number, string> = { 10: "\\n", 13: "\\r", 9: "\\t", 8: "\\b", 12: "\\f" };

/** Returns repaired JSON text, or undefined when the text is not an object at its root. */
export function repairJson(text: string): { text: string; repairs: Set<Rung> } | undefined {
  const repairs = new Set<Rung>();
  const n = text.length;
  let i = 0;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== LBRACE) return undefined;

  let out = "";
  let last = 0; // text[last, i) is pending copy into out
  const pos = (at: number) => out.length + (at - last);
  const flush = (to: number) => {
    if (to > last) out += text.slice(last, to);
    last = to;
  };
  const stack: Frame[] = [];
  let pendingComma = false;
  let done = false; // the root object has closed

  const beginValue = (at: number) => {
    if (pendingComma) {
      flush(at);
      out += ",";
      pendingComma = false;
    }
  };
  const completed = () => {
    const top = stack[stack.length - 1];
    if (top) top.state = S.After;
  };

  // EOF state for truncation handling
  let inString = false, stringIsKey = false, stringStart = 0;
  let tokenStart = -1;

  while (i < n) {
    const c = text.charCodeAt(i);
    if (done) {
      if (c === RBRACE || c === RBRACKET) {
        flush(i);
        last = i + 1;
        repairs.add("surplus_closers");
      } else if (!isSpace(c)) {
        return { text: out + text.slice(last), repairs }; // trailing garbage: let the parser refuse it
      }
      i++;
      continue;
    }
    if (isSpace(c)) { i++; continue; }
    const top = stack[stack.length - 1];
    if (c === QUOTE) {
      const isKey = top !== undefined && (top.state === S.ObjStart || top.state === S.Key);
      beginValue(i);
      inString = true;
      stringIsKey = isKey;
      stringStart = pos(i);
      i++;
      // scan the string body
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === QUOTE) break;
        if (d === BACKSLASH) { i += 2; continue; }
        if (d < 32) {
          flush(i);
          out += CONTROL_ESCAPES[d] ?? "";
          last = i + 1;
          repairs.add("control_chars");
        }
        i++;
      }
      if (i >= n) break; // cut inside the string
      inString = false;
      i++;
      if (top && stringIsKey) top.state = S.Colon;
      else completed();
      continue;
    }
    if (c === LBRACE || c === LBRACKET) {
      beginValue(i);
      stack.push({ closer: c === LBRACE ? RBRACE : RBRACKET, state: c === LBRACE ? S.ObjStart : S.ArrStart, memberStart: pos(i + 1) });
      i++;
      continue;
    }
    if (c === RBRACE || c === RBRACKET) {
      if (pendingComma) { pendingComma = false; repairs.add("trailing_commas"); }
      let depth = stack.length - 1;
      while (depth >= 0 && stack[depth].closer !== c) depth--;
      if (depth < 0) {
        // closes nothing that is open: a surplus closer
        flush(i);
        last = i + 1;
        repairs.add("surplus_closers");
        i++;
        continue;
      }
      if (depth < stack.length - 1) {
        // closes an outer container: close the inner ones it skipped first
        flush(i);
        while (stack.length - 1 > depth) closeFrame(stack.pop()!);
        repairs.add("closed_brackets");
      }
      stack.pop();
      i++;
      if (stack.length === 0) done = true;
      else completed();
      continue;
    }
    if (c === COMMA) {
      flush(i);
      last = i + 1;
      if (top && top.state === S.After) {
        top.memberStart = out.length;
        top.state = top.closer === RBRACE ? S.Key : S.Value;
        pendingComma = true;
      } else {
        repairs.add("trailing_commas"); // a doubled or leading comma
      }
      i++;
      continue;
    }
    if (c === COLON) {
      if (top && top.state === S.Colon) top.state = S.Value;
      i++;
      continue;
    }
    if (isTokenChar(c)) {
      beginValue(i);
      tokenStart = i;
      while (i < n && isTokenChar(text.charCodeAt(i))) i++;
      if (i >= n) break; // cut inside a number or literal
      tokenStart = -1;
      completed();
      continue;
    }
    i++; // anything else is copied; the parser decides
  }

  function closeFrame(f: Frame) {
    out += f.closer === RBRACE ? "}" : "]";
  }

  if (done) return { text: out + text.slice(last), repairs };

  // Cut off: finish or drop what was being written, then close every open container.
  repairs.add("closed_brackets");
  flush(n);
  const top = stack[stack.length - 1];
  if (inString) {
    if (stringIsKey) out = out.slice(0, top.memberStart);
    else {
      out = trimPartialEscape(out, stringStart) + '"';
      top.state = S.After;
    }
  } else if (tokenStart >= 0) {
    // a token has no escapes, so it is the tail of out verbatim
    const completedToken = completeToken(text.slice(tokenStart));
    if (completedToken === undefined) out = out.slice(0, top.memberStart);
    else {
      out = out.slice(0, out.length - (n - tokenStart)) + completedToken;
      top.state = S.After;
    }
  }
  if (top.state === S.Colon || (top.state === S.Value && top.closer === RBRACE)) out = out.slice(0, top.memberStart);
  for (let d = stack.length - 1; d >= 0; d--) closeFrame(stack[d]);
  return { text: out, repairs };
}

/** Drops a cut escape at the end of a string body (`\`, `\u12`). */
function trimPartialEscape(out: string, stringStart: number): string {
  let end = out.length;
  let slashes = 0;
  while (end - slashes - 1 > stringStart && out.charCodeAt(end - slashes - 1) === BACKSLASH) slashes++;
  if (slashes % 2 === 1) return out.slice(0, end - 1);
  const u = out.lastIndexOf("\\u", end);
  if (u > stringStart && end - u < 6) {
    let s = 0;
    while (u - s - 1 > stringStart && out.charCodeAt(u - s - 1) === BACKSLASH) s++;
    if (s % 2 === 0) end = u;
  }
  return out.slice(0, end);
}

const LITERALS = ["true", "false", "null"];

/** Completes a cut number or literal, or undefined when it cannot be completed faithfully. */
function completeToken(token: string): string | undefined {
  for (const lit of LITERALS) if (lit.startsWith(token)) return lit;
  const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(token);
  return m && m[0].length > 0 && m[0] !== "-" ? m[0] : undefined;
}
