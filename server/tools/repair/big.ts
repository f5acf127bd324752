// Long string values of the argument ladder, parsed outside the repaired text. A file's content
// can be most of a call; copying it into the repaired text and then parsing it again allocates
// it twice, and past V8's large-object threshold (128 KB) each allocation costs more than the
// whole scan. So the scanner writes a placeholder for such a string and records its source
// range; the value is decoded straight from the source and put back after the parse.

/** Strings at least this long (in UTF-16 units, quotes included) are parsed out of band. */
export const BIG_STRING = 16384;
/** Cut or patched strings are decoded in pieces of this size, each small enough for young space. */
const CHUNK = 16384;

export interface BigString {
  /** Source offsets of the string body (after the opening quote, before the closing one). */
  start: number;
  end: number;
  /** The body is followed by its closing quote and holds no raw control character. */
  intact: boolean;
}

/** The placeholder text for the k-th long string. A parsed value starts with U+0000 only if the
 *  source holds a `\u0000` escape, and the scanner takes this path only when it does not. */
export const placeholder = (k: number) => `"\\u0000${k}"`;

const CONTROL = /[\x00-\x1f]/g;
const CONTROL_ESCAPES: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };
const escapeControl = (c: string) => CONTROL_ESCAPES[c] ?? "";

/** Decodes one recorded string; throws SyntaxError as JSON.parse does when the body is invalid. */
function decode(src: string, s: BigString): string {
  // A slice of the source is parsed in place (V8 reads a sliced string's parent): no copy.
  if (s.intact) return JSON.parse(src.slice(s.start - 1, s.end + 1));
  const values: string[] = [];
  for (let p = s.start; p < s.end;) {
    let q = s.end;
    if (q - p > CHUNK) {
      q = p + CHUNK;
      while (q > p && !isEscapeBoundary(src, q)) q--;
      if (q === p) q = s.end;
    }
    values.push(JSON.parse(`"${src.slice(p, q).replace(CONTROL, escapeControl)}"`));
    p = q;
  }
  return values.join("");
}

/** An escape is at most 6 units (`\uXXXX`): with no backslash in the 5 before q, none spans q. */
function isEscapeBoundary(src: string, q: number): boolean {
  for (let k = q - 5; k < q; k++) if (src.charCodeAt(k) === 92) return false;
  return true;
}

/** Puts the decoded long strings in place of their placeholders in a parsed value. */
export function restoreBigStrings(value: unknown, src: string, bigs: BigString[]): unknown {
  const decoded = bigs.map((s) => decode(src, s));
  return restore(value, decoded);
}

function restore(v: unknown, decoded: string[]): unknown {
  if (typeof v === "string") return v.charCodeAt(0) === 0 ? decoded[Number(v.slice(1))] : v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = restore(v[i], decoded);
  } else if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      const was = o[k];
      const now = restore(was, decoded);
      // defineProperty: plain assignment to an own "__proto__" key would set the prototype
      if (now !== was) Object.defineProperty(o, k, { value: now });
    }
  }
  return v;
}
