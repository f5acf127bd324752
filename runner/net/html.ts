// HTML → readable text for the model: one linear pass over the markup (no regex backtracking on
// untrusted input), dropping scripts, styles and other non-content, keeping headings, lists,
// links (with their targets), preformatted blocks and table cells in a Markdown-ish form.

const SKIP = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "svg",
  "math",
  "iframe",
  "object",
  "canvas",
  "head",
  "select",
]);
const BLOCK = new Set([
  "p",
  "div",
  "section",
  "article",
  "header",
  "footer",
  "nav",
  "aside",
  "main",
  "ul",
  "ol",
  "table",
  "tr",
  "blockquote",
  "dl",
  "dt",
  "dd",
  "figure",
  "figcaption",
  "form",
  "address",
  "fieldset",
  "details",
  "summary",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "pre",
  "hr",
  "br",
  "tbody",
  "thead",
  "caption",
  "body",
  "html",
]);
const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  copy: "©",
  reg: "®",
  trade: "™",
  hellip: "…",
  mdash: "—",
  ndash: "–",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  bull: "•",
  middot: "·",
  laquo: "«",
  raquo: "»",
  deg: "°",
  plusmn: "±",
  times: "×",
  divide: "÷",
  euro: "€",
  pound: "£",
  yen: "¥",
  cent: "¢",
  sect: "§",
  para: "¶",
  shy: "",
  zwj: "",
  zwnj: "",
  larr: "←",
  rarr: "→",
  uarr: "↑",
  darr: "↓",
  ensp: " ",
  emsp: " ",
  thinsp: " ",
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,10});?/g, (whole, body: string) => {
    if (body[0] === "#") {
      const code = body[1] === "x" || body[1] === "X" ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      const valid = code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff);
      return valid ? String.fromCodePoint(code) : "\uFFFD";
    }
    return ENTITIES[body.toLowerCase()] ?? whole;
  });
}

function attr(tag: string, name: string): string | undefined {
  const m = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, "i").exec(tag);
  return m ? decodeEntities(m[1] ?? m[2] ?? m[3] ?? "") : undefined;
}

/** End of the tag starting at `lt` (index of its `>`), honouring quoted attribute values. */
function tagEnd(html: string, lt: number): number {
  let quote = "";
  for (let i = lt + 1; i < html.length; i++) {
    const c = html[i];
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ">") return i;
  }
  return -1;
}

export function extractTitle(html: string): string | undefined {
  const m = /<title[^>]*>([^<]{0,500})/i.exec(html);
  const title = m ? decodeEntities(m[1]).replace(/\s+/g, " ").trim() : "";
  return title || undefined;
}

export function htmlToText(html: string, baseUrl?: string): string {
  const out: string[] = [];
  let pre = 0;
  const links: { href: string; at: number }[] = [];
  // Adds line breaks up to `n` in a row, so nested blocks do not pile up blank lines.
  const newline = (n = 1) => {
    let have = 0;
    for (let k = out.length - 1; k >= 0 && have < n; k--) {
      const piece = out[k];
      let j = piece.length - 1;
      for (; j >= 0 && (piece[j] === "\n" || piece[j] === " "); j--) if (piece[j] === "\n") have++;
      if (j >= 0) break;
    }
    if (out.length > 0 && have < n) out.push("\n".repeat(n - have));
  };
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf("<", i);
    const text = html.slice(i, lt === -1 ? html.length : lt);
    if (text) out.push(pre ? decodeEntities(text) : decodeEntities(text.replace(/\s+/g, " ")));
    if (lt === -1) break;
    if (html.startsWith("<!--", lt)) {
      const end = html.indexOf("-->", lt + 4);
      i = end === -1 ? html.length : end + 3;
      continue;
    }
    // "<" not opening a tag, comment or declaration is text ("a < b").
    if (!/[a-zA-Z/!?]/.test(html[lt + 1] ?? "")) {
      out.push("<");
      i = lt + 1;
      continue;
    }
    const end = tagEnd(html, lt);
    if (end === -1) {
      out.push(decodeEntities(html.slice(lt).replace(/\s+/g, " ")));
      break;
    }
    const tag = html.slice(lt, end + 1);
    i = end + 1;
    const m = /^<(\/?)([a-zA-Z][a-zA-Z0-9-]*)/.exec(tag);
    if (!m) continue; // <!DOCTYPE>, <?xml?>, stray "<"
    const closing = m[1] === "/";
    const name = m[2].toLowerCase();
    if (!closing && SKIP.has(name) && !tag.endsWith("/>")) {
      const closer = new RegExp(`</${name}[\\s>/]`, "gi");
      closer.lastIndex = i;
      const close = closer.exec(html)?.index ?? -1;
      i = close === -1 ? html.length : tagEnd(html, close) + 1 || html.length;
      continue;
    }
    if (name === "pre") pre = Math.max(0, pre + (closing ? -1 : 1));
    if (name === "pre") out.push(closing ? "\n```\n" : "\n```\n");
    else if (/^h[1-6]$/.test(name)) {
      newline(2);
      if (!closing) out.push(`${"#".repeat(Number(name[1]))} `);
    } else if (name === "li" && !closing) {
      newline();
      out.push("- ");
    } else if ((name === "td" || name === "th") && !closing) out.push(" | ");
    else if (name === "hr") out.push("\n---\n");
    else if (name === "br") newline();
    else if (name === "p" || name === "blockquote") newline(2);
    else if (BLOCK.has(name)) newline();
    else if (name === "img" && !closing) {
      const alt = attr(tag, "alt");
      if (alt) out.push(`[image: ${alt}]`);
    } else if (name === "a") {
      if (!closing) links.push({ href: attr(tag, "href") ?? "", at: out.length });
      else {
        const link = links.pop();
        const target = link ? absolute(link.href, baseUrl) : undefined;
        const label = link && target ? linkLabel(out, link.at, target) : "";
        if (target && label && label !== target) out.push(` (${target})`);
      }
    }
  }
  return tidy(out.join(""));
}

/**
 * A link's text from `out[at]` on, read only as far as needed to tell whether it is empty or is
 * its own target: joining all of it at each `</a>` made a page of nested links quadratic (17 s
 * for 380 KB, on the runner's event loop).
 */
function linkLabel(out: string[], at: number, target: string): string {
  const most = target.length + 256;
  let text = "";
  for (let i = at; i < out.length && text.length <= most; i++) text += out[i];
  return text.trim().slice(0, most);
}

function absolute(href: string, base?: string): string | undefined {
  try {
    const u = new URL(href, base);
    return u.protocol === "http:" || u.protocol === "https:" || u.protocol === "mailto:" ? u.toString() : undefined;
  } catch {
    return undefined;
  }
}

function tidy(text: string): string {
  const lines: string[] = [];
  let fence = false;
  for (const raw of text.split("\n")) {
    if (raw.trim() === "```") fence = !fence;
    lines.push(fence ? raw.replace(/\s+$/, "") : raw.replace(/[ \t\u00a0]+/g, " ").trim());
  }
  return lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}
