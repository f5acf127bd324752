// curl's own URL globbing, as curl expands it before it connects: `{a,b}` sets and `[a-z]`,
// `[1-9]`, `[01-10]` ranges with an optional `:step`, a backslash keeping the next character
// literal (`curl 'http://{a,evi}l.com'` fetches http://evil.com/). The policy expands the part
// of a URL that names the host, so a host rule sees every host curl will reach.

/** The expansions of `text`; "too many" past `cap`; undefined where curl refuses the glob. */
export function expandCurlGlob(text: string, cap = 1000): string[] | "too many" | undefined {
  const parts = parse(text);
  if (!parts) return undefined;
  let out = [""];
  for (const alternatives of parts) {
    if (out.length * alternatives.length > cap) return "too many";
    out = out.flatMap((head) => alternatives.map((a) => head + a));
  }
  return out;
}

const IPV6_LITERAL = /^[0-9a-f]*:[0-9a-f:.]*(%25[\w.~-]+)?$/i;

/** Whether curl would glob `text` at all. */
export const hasCurlGlob = (text: string) => /[{[]/.test(text);

// Each piece of the text as its alternatives: a literal run has one.
function parse(text: string): string[][] | undefined {
  const parts: string[][] = [];
  let literal = "";
  const flush = () => {
    if (literal) parts.push([literal]);
    literal = "";
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\\" && i + 1 < text.length) literal += text[++i];
    else if (c === "{") {
      const close = closing(text, i, "}");
      if (close < 0) return undefined;
      flush();
      parts.push(setOf(text.slice(i + 1, close)));
      i = close;
    } else if (c === "[") {
      const close = closing(text, i, "]");
      if (close < 0) return undefined;
      // An IPv6 address in brackets is the host, not a range (glob.c's peek_ipv6).
      if (IPV6_LITERAL.test(text.slice(i + 1, close))) {
        literal += text.slice(i, close + 1);
        i = close;
        continue;
      }
      const range = rangeOf(text.slice(i + 1, close));
      if (!range) return undefined;
      flush();
      parts.push(range);
      i = close;
    } else if (c === "}" || c === "]") return undefined;
    else literal += c;
  }
  flush();
  return parts;
}

function closing(text: string, from: number, close: string): number {
  for (let i = from + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === close) return i;
    else if (text[i] === "{" || text[i] === "[") return -1; // curl does not nest globs
  }
  return -1;
}

function setOf(body: string): string[] {
  const items: string[] = [];
  let item = "";
  for (let i = 0; i < body.length; i++) {
    if (body[i] === "\\" && i + 1 < body.length) item += body[++i];
    else if (body[i] === ",") {
      items.push(item);
      item = "";
    } else item += body[i];
  }
  items.push(item);
  return items;
}

const RANGE = /^(?:([a-zA-Z])-([a-zA-Z])|(\d+)-(\d+))(?::(\d+))?$/;

function rangeOf(body: string): string[] | undefined {
  const m = RANGE.exec(body);
  if (!m) return undefined;
  const step = m[5] === undefined ? 1 : Number(m[5]);
  if (step < 1) return undefined;
  const out: string[] = [];
  if (m[1] !== undefined) {
    const [from, to] = [m[1].charCodeAt(0), m[2].charCodeAt(0)];
    if (to < from || m[1] < "a" !== m[2] < "a") return undefined;
    for (let c = from; c <= to && out.length <= 1000; c += step) out.push(String.fromCharCode(c));
    return out;
  }
  const [from, to] = [Number(m[3]), Number(m[4])];
  if (to < from) return undefined;
  // A leading zero pads every number to the first one's width.
  const width = m[3].startsWith("0") ? m[3].length : 0;
  for (let n = from; n <= to && out.length <= 1000; n += step) out.push(String(n).padStart(width, "0"));
  return out;
}
