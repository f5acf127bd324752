// Secrets out of what a share-link viewer reads: a shared view has its secrets redacted.
// The owner's own views are untouched. Patterns are for credentials that look like
// credentials: known token formats, private key blocks (also one cut off before its END line),
// passwords in URLs, bearer tokens, `.env`-style assignments to secret-named variables and
// quoted literals given to secret-named keys. They run on RE2, in time linear in the text: an
// output of 100,000 letters took V8's backtracking minutes. A stream of pieces (streamed text,
// a command's output) is redacted joined, not piece by piece (redact-stream.ts). A secret in no
// known shape can still show: this narrows what a link leaks, it does not make sharing a secret safe.
import RE2 from "re2";

export const REDACTED = "[redacted]";

export const SECRET_NAME =
  "(?:secret|token|password|passwd|pwd|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?)";
export const PEM_MARKER = `-----BEGIN PRIVATE KEY-----${REDACTED}-----END PRIVATE KEY-----`;

/** How far a secret of a rule's kind may still run once found at the end of a text: to the next
 *  whitespace, to the end of its line, or through a private key's END line. */
export type SecretKind = "word" | "line" | "pem";

interface Rule {
  pattern: RE2;
  /** A literal every match holds: where it does not occur, the pattern is not run (most text
   *  holds none, and a call into RE2 costs microseconds). */
  hint: RegExp;
  kind: SecretKind;
  /** The text standing for a match (groups that are not secret are kept). */
  replace(m: RegExpExecArray): string;
  /** Only where the rule before it found nothing overlapping (a key without its END line). */
  fallback?: boolean;
}

const rule = (
  hint: RegExp,
  source: string,
  flags: string,
  kind: SecretKind,
  replace: Rule["replace"] = () => REDACTED,
): Rule => ({ hint, pattern: new RE2(source, `g${flags}u`), kind, replace });
/** Case-insensitive, as the two rules it stands for. */
export const SECRET_NAME_HINT = new RegExp(SECRET_NAME, "i");
const PEM_HINT = /-----BEGIN /;

const RULES: Rule[] = [
  rule(
    PEM_HINT,
    "-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\\s\\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
    "",
    "pem",
    () => PEM_MARKER,
  ),
  // A key cut off before its END line (a truncated output, a stream that ended): its body.
  {
    ...rule(
      PEM_HINT,
      "-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[A-Za-z0-9+/=\\s:,-]*",
      "",
      "pem",
      () => `-----BEGIN PRIVATE KEY-----${REDACTED}`,
    ),
    fallback: true,
  },
  rule(/AKIA|ASIA/, "\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b", "", "word"),
  rule(/gh[pousr]_/, "\\bgh[pousr]_[A-Za-z0-9]{36,255}\\b", "", "word"),
  rule(/github_pat_/, "\\bgithub_pat_[A-Za-z0-9_]{22,255}\\b", "", "word"),
  rule(/sk-/, "\\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}", "", "word"),
  rule(/xox/, "\\bxox[abposr]-[A-Za-z0-9-]{10,}", "", "word"),
  rule(/AIza/, "\\bAIza[0-9A-Za-z_-]{35}\\b", "", "word"),
  rule(/[rs]k_/, "\\b[rs]k_(?:live|test)_[0-9a-zA-Z]{16,}\\b", "", "word"),
  rule(/eyJ/, "\\beyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}", "", "word"),
  rule(/bearer|basic/i, "\\b(Bearer|Basic)\\s+[A-Za-z0-9._~+/=-]{16,}", "i", "word", (m) => `${m[1]} ${REDACTED}`),
  // scheme://user:password@host
  rule(/:\/\//, "\\b([a-z][a-z0-9+.-]*://[^\\s:@/]+):([^\\s@/]+)@", "i", "word", (m) => `${m[1]}:${REDACTED}@`),
  // .env lines: API_TOKEN=…, export DB_PASSWORD="…", also as a line of a unified diff (+API_TOKEN=…)
  rule(
    SECRET_NAME_HINT,
    `^([+-]?\\s*(?:export\\s+)?[A-Za-z0-9_]*${SECRET_NAME}[A-Za-z0-9_]*\\s*=\\s*).+$`,
    "im",
    "line",
    (m) => `${m[1]}${REDACTED}`,
  ),
  // "password": "…", apiKey = '…', client_secret: "…" (a quoted literal, not an expression)
  ...['"', "'"].map((q) =>
    rule(
      SECRET_NAME_HINT,
      `(["']?[A-Za-z0-9_-]*${SECRET_NAME}[A-Za-z0-9_-]*["']?\\s*[:=]\\s*)${q}[^"'\\n]{4,}${q}`,
      "i",
      "line",
      (m) => `${m[1]}${q}${REDACTED}${q}`,
    ),
  ),
];

/** A secret found in a text: `[start, end)` stands as `replacement`. */
export interface Secret {
  start: number;
  end: number;
  replacement: string;
  kind: SecretKind;
}

/** Every secret in `text`, in order and not overlapping: one found inside another goes with
 *  the outer one, two that overlap become one, redacted whole. */
export function findSecrets(text: string): Secret[] {
  const found: Secret[] = [];
  let before: Secret[] = [];
  for (const r of RULES) {
    const mine: Secret[] = [];
    if (!r.hint.test(text)) {
      before = mine;
      continue;
    }
    r.pattern.lastIndex = 0;
    for (let m = r.pattern.exec(text); m; m = r.pattern.exec(text)) {
      if (m[0].length === 0) {
        r.pattern.lastIndex++;
        continue;
      }
      const s = { start: m.index, end: m.index + m[0].length, replacement: r.replace(m), kind: r.kind };
      if (!r.fallback || !before.some((b) => b.start < s.end && s.start < b.end)) mine.push(s);
    }
    for (const s of mine) found.push(s);
    before = mine;
  }
  if (found.length < 2) return found;
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Secret[] = [found[0]];
  for (const s of found.slice(1)) {
    const last = out[out.length - 1];
    if (s.start >= last.end) out.push(s);
    else if (s.end > last.end)
      out[out.length - 1] = {
        start: last.start,
        end: s.end,
        replacement: REDACTED,
        kind: last.kind === "word" ? s.kind : last.kind,
      };
  }
  return out;
}

export function redactText(text: string): string {
  const secrets = findSecrets(text);
  if (secrets.length === 0) return text;
  let out = "";
  let at = 0;
  for (const s of secrets) {
    out += text.slice(at, s.start) + s.replacement;
    at = s.end;
  }
  return out + text.slice(at);
}

const VERBATIM = Symbol("verbatim");

/** Marks an answer whose strings are not text (an image's base64): redaction would only corrupt
 *  it, and what an image shows cannot be redacted anyway. The mark is not serialized. */
export function verbatim<T extends object>(value: T): T {
  return Object.defineProperty(value, VERBATIM, { value: true, enumerable: false });
}

/** A copy of `value` with every string redacted; other values (numbers, symbols, dates) kept. */
export function redactDeep<T>(value: T): T {
  if (typeof value === "string") return redactText(value) as T;
  if (value && typeof value === "object" && VERBATIM in value) return value;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v)) as T;
  if (value && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v);
    return out as T;
  }
  return value;
}

/** For a procedure's answer: a value, or an async iterable (a subscription) whose every item is redacted. */
export function redactAnswer<T>(data: T): T {
  const iterable = data as { [Symbol.asyncIterator]?: () => AsyncIterator<unknown> } | null;
  if (iterable && typeof iterable[Symbol.asyncIterator] === "function") {
    const source = data as unknown as AsyncIterable<unknown>;
    return (async function* () {
      for await (const item of source) yield redactDeep(item);
    })() as unknown as T;
  }
  return redactDeep(data);
}
