// Secrets out of what a share-link viewer reads (DESIGN.md: shared views have secrets
// redacted). The owner's own views are untouched. Patterns are for credentials that look like
// credentials: known token formats, private key blocks, passwords in URLs, bearer tokens,
// `.env`-style assignments to secret-named variables and quoted literals given to secret-named
// keys. A secret split across two pages of a long output, or one in no known shape, can still
// show: this narrows what a link leaks, it does not make sharing a secret safe.

export const REDACTED = "[redacted]";

const SECRET_NAME = "(?:secret|token|password|passwd|pwd|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret|credentials?)";

const RULES: [RegExp, string][] = [
  [/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----/g, `-----BEGIN PRIVATE KEY-----${REDACTED}-----END PRIVATE KEY-----`],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [/\bgh[pousr]_[A-Za-z0-9]{36,255}\b/g, REDACTED],
  [/\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g, REDACTED],
  [/\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}/g, REDACTED],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, REDACTED],
  [/\b[rs]k_(?:live|test)_[0-9a-zA-Z]{16,}\b/g, REDACTED],
  [/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{16,}/gi, `$1 ${REDACTED}`],
  // scheme://user:password@host
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s:@/]+):([^\s@/]+)@/gi, `$1:${REDACTED}@`],
  // .env lines: API_TOKEN=…, export DB_PASSWORD="…", also as a line of a unified diff (+API_TOKEN=…)
  [new RegExp(`^([+-]?\\s*(?:export\\s+)?[A-Za-z0-9_]*${SECRET_NAME}[A-Za-z0-9_]*\\s*=\\s*).+$`, "gim"), `$1${REDACTED}`],
  // "password": "…", apiKey = '…', client_secret: "…" (a quoted literal, not an expression)
  [new RegExp(`(["']?[A-Za-z0-9_-]*${SECRET_NAME}[A-Za-z0-9_-]*["']?\\s*[:=]\\s*)(["'])[^"'\\n]{4,}\\2`, "gi"), `$1$2${REDACTED}$2`],
];

export function redactText(text: string): string {
  let out = text;
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  return out;
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
