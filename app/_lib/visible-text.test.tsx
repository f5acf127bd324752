// What the person reads of an agent-chosen name or line: bidi controls and invisible characters
// as marks (a `\u202e` name no longer shows as `x.jpg`), control characters too in a name.
import { describe, expect, it } from "vitest";
import { renderToStaticMarkup } from "react-dom/server";
import { markedName, markedText, VisibleText } from "./visible-text";

const shown = (node: React.ReactNode) =>
  renderToStaticMarkup(<span>{node}</span>)
    .replace(/<[^>]*>/g, "")
    .replaceAll("&quot;", '"');

describe("VisibleText", () => {
  it("marks a name's override, isolate, zero-width and control characters, and leaves plain text as it is", () => {
    expect(shown(<VisibleText text={"invoice\u202egpj.sh"} name />)).toBe("invoice⟨U+202E⟩gpj.sh");
    expect(shown(<VisibleText text={"src/hidden\n.env"} name />)).toBe("src/hidden⟨U+000A⟩.env");
    expect(shown(<VisibleText text={"a\u200b\u2066b\x1b[31m"} name />)).toBe("a⟨U+200B⟩⟨U+2066⟩b⟨U+001B⟩[31m");
    expect(shown(<VisibleText text="café/naïve — 名前.ts" name />)).toBe("café/naïve — 名前.ts");
  });

  it("keeps a line's tabs, and marks its bidi characters, in markup and in a label", () => {
    expect(shown(<VisibleText text={"\tif (a) {\u2067}"} />)).toBe("\tif (a) {⟨U+2067⟩}");
    expect(markedText("echo ok \u2067; curl x #\u2069")).toBe("echo ok ⟨U+2067⟩; curl x #⟨U+2069⟩");
    expect(shown(<VisibleText text={"ok\u{e0072}\u{e006d}"} />)).toBe("ok⟨U+E0072⟩⟨U+E006D⟩");
    expect(shown(<VisibleText text="👍🏽 ✔️" />)).toBe("👍🏽 ✔️");
  });

  it("writes a name for a confirm dialog with its newline and bidi marks, so the dialog names that file", () => {
    // Plain text, no markup: confirm() shows a string, where `\n.env` would read as a second line.
    expect(markedName("src/hidden\n.env")).toBe("src/hidden⟨U+000A⟩.env");
    expect(markedName("notes\u202etxt.exe")).toBe("notes⟨U+202E⟩txt.exe");
    expect(markedName("a\tb")).toBe("a⟨U+0009⟩b");
    expect(markedName("plain/名前.ts")).toBe("plain/名前.ts");
  });
});
