// What PostgreSQL can hold, for text that comes from a model, a person or a tool: its text
// columns take no NUL, and jsonb refuses the \u0000 escape and the \ud800-style escape of an
// unpaired surrogate that JSON.stringify writes for them. One such character in a model's reply
// used to fail the turn there ("unsupported Unicode escape sequence") and drop its events.
// Stored, a NUL reads as ␀ (U+2400, visible where the byte was) and an unpaired surrogate as
// U+FFFD, as a UTF-8 decoder shows it. On PostgreSQL the driver's pools (driver.ts), the JSON of
// events and messages and every Prisma write and filter (index.ts) go through here; SQLite keeps both as
// they are, but for the tool slot's rows, which use storableText on either database.

const NUL = /\0/g;
// A high surrogate with no low one after it, or a low one with no high one before it.
const UNPAIRED = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const UNPAIRED_TEST = new RegExp(UNPAIRED.source);

export function storableText(text: string): string {
  const nul = text.includes("\0");
  if (!nul && !UNPAIRED_TEST.test(text)) return text;
  return (nul ? text.replace(NUL, "\u2400") : text).replace(UNPAIRED, "\ufffd");
}

/** A copy of a JSON value for an event or a Json column, every string storable (storable below):
 *  a copy, as whoever reads the event may change it; an absent value is stored as null. */
export function storableJson(value: unknown): unknown {
  return storable(value, true) ?? null;
}

// JSON.stringify escapes NUL as \u0000 and an unpaired surrogate as \udXXX; everything else it
// writes as itself. (An escaped backslash before "u" matches too: then only a needless reparse.)
const ESCAPE_JSONB_REFUSES = /\\u(0000|d[89a-f])/;

/** JSON text as jsonb takes it: the same text unless it holds an escape jsonb refuses. */
export function jsonbText(json: string): string {
  if (!ESCAPE_JSONB_REFUSES.test(json)) return json;
  return JSON.stringify(storableJson(JSON.parse(json)));
}

/** A query parameter a PostgreSQL text column takes: a string's NUL as ␀, in an array's strings
 *  too (a `$1::text[]` of ids or payloads). The value itself when it holds none. */
export function pgValue(value: unknown): unknown {
  if (typeof value === "string") return value.includes("\0") ? value.replace(NUL, "\u2400") : value;
  if (!Array.isArray(value)) return value;
  const out = value.map(pgValue);
  return out.some((v, i) => v !== value[i]) ? out : value;
}

/** A value with every string storable, object keys too (a Json column's keys come from a model
 *  or a person as much as its values do); objects that are not plain (dates, bytes, decimals) and
 *  undefined (Prisma's "leave as is") are kept. Without `copy`, the value itself when nothing
 *  changes, so a clean write costs a walk and no copy. */
export function storable(value: unknown, copy = false): unknown {
  if (typeof value === "string") return storableText(value);
  if (Array.isArray(value)) {
    const out = value.map((v) => storable(v, copy));
    return copy || out.some((v, i) => v !== value[i]) ? out : value;
  }
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const entries = Object.entries(value);
  const mapped = entries.map(([k, v]): [string, unknown] => [storableText(k), storable(v, copy)]);
  const changed = copy || mapped.some(([k, v], i) => k !== entries[i][0] || v !== entries[i][1]);
  return changed ? Object.fromEntries(mapped) : value;
}
