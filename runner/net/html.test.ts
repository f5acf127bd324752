// HTML → text conversion for fetch_url.
import { describe, expect, it } from "vitest";
import { decodeEntities, extractTitle, htmlToText } from "./html";

describe("htmlToText", () => {
  it("drops scripts, styles, comments and the head, keeping the content", () => {
    const html = `<!DOCTYPE html><html><head><title>T</title><style>p{color:red}</style></head>
      <body><!-- hidden --><script type="text/javascript">var s = "<p>not text</p>";</script>
      <noscript>enable js</noscript><p>Visible</p><SCRIPT>x()</SCRIPT ><p>After</p></body></html>`;
    expect(htmlToText(html)).toBe("Visible\n\nAfter");
  });

  it("renders headings, lists, links with absolute targets and images", () => {
    const html = `<h2>Install</h2><ol><li>Get <a href="/dl?x=1&amp;y=2">the file</a></li><li>Run it</li></ol>
      <p><img src="a.png" alt="diagram"> <a href="https://example.com/">https://example.com/</a> <a href="javascript:void 0">js</a></p>`;
    expect(htmlToText(html, "https://site.test/docs/")).toBe(
      "## Install\n\n- Get the file (https://site.test/dl?x=1&y=2)\n- Run it\n\n[image: diagram] https://example.com/ js",
    );
  });

  it("names nested links' targets once each, and a link whose text is its target not at all", () => {
    const html = `<a href="/outer">see <a href="/inner">inner</a> and more</a> <a href="https://x.test/">  https://x.test/ </a>`;
    expect(htmlToText(html, "https://site.test/")).toBe(
      "see inner (https://site.test/inner) and more (https://site.test/outer) https://x.test/",
    );
    // Thousands deep: each </a> reads the link's text only as far as it needs.
    const deep = `${'<a href="/d">x'.repeat(20_000)}${"</a>".repeat(20_000)}`;
    expect(htmlToText(deep, "https://site.test/").match(/\(https:\/\/site\.test\/d\)/g)).toHaveLength(20_000);
  }, 10_000); // a few ms; quadratic, 20 s

  it("keeps preformatted text as it is, fenced", () => {
    const html = `<p>Example:</p><pre>  if (a &lt; b) {\n    go();\n  }</pre><p>done</p>`;
    expect(htmlToText(html)).toBe("Example:\n\n```\n  if (a < b) {\n    go();\n  }\n```\n\ndone");
  });

  it("collapses whitespace and separates table cells", () => {
    const html = `<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>  2\n </td></tr></table>`;
    expect(htmlToText(html)).toBe("| a | b\n| 1 | 2");
  });

  it("survives broken markup: unclosed tags, stray < and quotes containing >", () => {
    expect(htmlToText(`<p title="a > b">x < y <b>bold`)).toBe("x < y bold");
    expect(htmlToText(`<script>never closed`)).toBe("");
    expect(htmlToText(`<a href="/x">unclosed link`)).toBe("unclosed link");
  });

  it("is linear on pathological input", () => {
    const html = "<div>".repeat(50_000) + "<".repeat(50_000) + "&amp".repeat(50_000);
    const text = htmlToText(html);
    expect(text.length).toBeGreaterThan(0);
  });
});

describe("entities and title", () => {
  it("decodes named and numeric entities, refusing invalid code points", () => {
    expect(decodeEntities("&lt;&#65;&#x42;&copy;&nbsp;&unknown;&#xD800;&#0;")).toBe("<AB© &unknown;\uFFFD\uFFFD");
  });

  it("extracts a title", () => {
    expect(extractTitle("<html><head><title>\n A &amp; B </title>")).toBe("A & B");
    expect(extractTitle("<p>none</p>")).toBeUndefined();
  });
});
