import { describe, expect, it } from "vitest";
import { renderToStaticMarkup } from "react-dom/server";
import { Markdown, parseBlocks, tableCells } from "./markdown";

const html = (md: string) => renderToStaticMarkup(<Markdown text={md} />);

describe("markdown", () => {
  it("renders blocks and inline marks", () => {
    const out = html("# Title\n\nSome **bold**, *em* and `code`.\n\n- one\n- two\n\n1. first\n\n> quoted\n\n```ts\nconst a = 1;\n```");
    expect(out).toContain("<h3>Title</h3>");
    expect(out).toContain("<strong>bold</strong>");
    expect(out).toContain("<em>em</em>");
    expect(out).toContain("<code>code</code>");
    expect(out).toContain("<ul><li>one</li><li>two</li></ul>");
    expect(out).toContain("<ol><li>first</li></ol>");
    expect(out).toContain("<blockquote>quoted</blockquote>");
    expect(out).toMatch(/<pre><code>const a = 1;<\/code><\/pre>/);
    expect(out).toContain("Copy");
  });

  it("never injects HTML and drops unsafe link targets", () => {
    const out = html('<img src=x onerror="alert(1)"> <script>alert(2)</script> [click](javascript:alert(3)) [ok](https://example.com)');
    expect(out).not.toContain("<img");
    expect(out).not.toContain("<script");
    expect(out).toContain("&lt;script&gt;");
    expect(out).not.toContain('href="javascript');
    expect(out).toContain("click (javascript:alert(3))");
    expect(out).toContain('href="https://example.com"');
  });

  it("shows an unclosed fence as code while it streams", () => {
    expect(parseBlocks("Here:\n```py\nprint(1)")).toEqual([
      { t: "p", text: "Here:" },
      { t: "code", lang: "py", text: "print(1)" },
    ]);
  });

  it("renders GFM tables with alignment, inline marks and escaped pipes", () => {
    const out = html("Files:\n\n| file | change | lines |\n|:---|:---:|---:|\n| `a.ts` | **greeting** | 3 |\n| b\\|c.ts | ~~old~~ |\n\nAfter.");
    expect(out).toContain("<th style=\"text-align:left\">file</th>");
    expect(out).toContain("<th style=\"text-align:center\">change</th>");
    expect(out).toContain("<td style=\"text-align:left\"><code>a.ts</code></td>");
    expect(out).toContain("<strong>greeting</strong>");
    expect(out).toContain("<td style=\"text-align:left\">b|c.ts</td>");
    expect(out).toContain("<del>old</del>");
    // a short row is padded to the header's width
    expect(out.match(/<tr>/g)).toHaveLength(3);
    expect(out).toContain("<td style=\"text-align:right\"></td>");
    expect(out).toContain("<p>After.</p>");
  });

  it("keeps a header row without its delimiter yet (still streaming) as text, and a lone pipe line as text", () => {
    expect(parseBlocks("| a | b |")).toEqual([{ t: "p", text: "| a | b |" }]);
    expect(parseBlocks("x | y\nmore")).toEqual([{ t: "p", text: "x | y\nmore" }]);
    expect(tableCells("| a | b \\| c |")).toEqual(["a", "b | c"]);
  });

  it("renders horizontal rules", () => {
    expect(parseBlocks("one\n\n---\n\ntwo")).toEqual([{ t: "p", text: "one" }, { t: "hr" }, { t: "p", text: "two" }]);
  });
});
