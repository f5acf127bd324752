// The argument ladder: turns the argument JSON a model streamed, possibly cut off or damaged,
// into an object. Rungs, in order: strict parse → raw control characters inside strings →
// trailing commas → close unclosed strings/brackets → drop surplus closers, refused above
// 1 MiB. Each rung only ever fires on text that is not valid JSON, so one scanning pass
// (json.ts) applies exactly the rungs a text needs and they are reported in ladder order.
import { restoreBigStrings } from "./big";
import { isSpace, RBRACE, repairJson } from "./json";

// RUNGS[k] is bit 1 << k of repairJson's flags.

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

/** The root is not `{`: valid JSON of another kind, or not JSON at all. */
function classifyNonObject(raw: string): ArgumentsResult {
  try {
    JSON.parse(raw);
    return { ok: false, reason: "not_object", message: "arguments must be a JSON object" };
  } catch {
    return { ok: false, reason: "unparseable", message: "arguments are not a JSON object and could not be repaired" };
  }
}

function isBlank(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isSpace(s.charCodeAt(i))) return false;
  return true;
}

function endsWithBrace(s: string): boolean {
  let i = s.length - 1;
  while (i >= 0 && isSpace(s.charCodeAt(i))) i--;
  return s.charCodeAt(i) === RBRACE;
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

export function parseArguments(raw: string, options: ArgumentOptions = {}): ArgumentsResult {
  const size = byteLength(raw);
  if (size > MAX_ARGUMENT_BYTES) {
    return {
      ok: false,
      reason: "too_large",
      message: `arguments are ${size} bytes, above the ${MAX_ARGUMENT_BYTES}-byte limit`,
    };
  }
  // Providers send "" for a call without arguments.
  if (isBlank(raw)) return { ok: true, value: {}, repairs: [] };
  let value: unknown;
  let parsed = false;
  // A JSON object ends with `}`: skip a parse that must fail, since a thrown SyntaxError
  // costs more than the repair itself (cut-off calls are the common damage).
  if (options.strict || endsWithBrace(raw)) {
    // A repairable call fails this parse, and most of a failed parse is the SyntaxError's stack
    // trace: nothing reads it, so none is captured (restored before anything else runs).
    const traceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      value = JSON.parse(raw);
      parsed = true;
    } catch {
      /* on to the ladder */
    } finally {
      Error.stackTraceLimit = traceLimit;
    }
  }
  if (!parsed) {
    if (options.strict) return { ok: false, reason: "unparseable", message: "arguments are not valid JSON" };
    const repaired = repairJson(raw);
    if (!repaired) return classifyNonObject(raw);
    try {
      value = JSON.parse(repaired.text);
      if (repaired.bigs) value = restoreBigStrings(value, raw, repaired.bigs);
    } catch {
      return { ok: false, reason: "unparseable", message: "arguments are not valid JSON and could not be repaired" };
    }
    if (!isObject(value)) return { ok: false, reason: "not_object", message: "arguments must be a JSON object" };
    const repairs: Rung[] = [];
    for (let k = 0; k < RUNGS.length; k++) if (repaired.repairs & (1 << k)) repairs.push(RUNGS[k]);
    return { ok: true, value, repairs };
  }
  if (!isObject(value)) return { ok: false, reason: "not_object", message: "arguments must be a JSON object" };
  return { ok: true, value, repairs: [] };
}
