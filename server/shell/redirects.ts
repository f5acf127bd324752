// The redirects of a statement as the analysis (analyse.ts) records them: which feed stdin and
// with what text, which files are written or read, and the here-documents whose expansion the
// grammar does not follow (marked opaque, never guessed).
import type { Node } from "./parser";
import type { Word } from "./types";
import { hasDescendant } from "./statements";
import { wordOf } from "./words";
import * as input from "./stdin";
import type { Stdin } from "./stdin";

const STDIN_REDIRECTS = new Set(["<", "<&", "<<", "<<-", "<<<", "&<"]);
export const REDIRECTS = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"]);

/** Where a walk records what redirects write, read and cannot see through. */
export interface RedirectSink {
  writes: boolean;
  readonly writeTargets: Word[];
  readonly readTargets: Word[];
  opaque(node: Node, reason: string): void;
}

// What a redirect that feeds stdin gives it: a here-document's or here-string's text; a file,
// or another descriptor than 0, is not known.
export function stdinOf(node: Node, source: string): Stdin | undefined {
  const fd = node.children.find((c) => c.type === "file_descriptor");
  if (fd && fd.text !== "0") return undefined;
  if (node.type === "heredoc_redirect") {
    // `<<EOF < f`: the grammar hangs the redirects after the delimiter here; the last wins.
    const later = node.childrenForFieldName("redirect").filter((r) => REDIRECTS.has(r.type));
    return later.some(input.feedsStdin) ? undefined : input.hereDocument(node, source);
  }
  if (node.type === "herestring_redirect") return input.hereString(node);
  return undefined;
}

// Returns true when the redirect feeds stdin; notes writes to anything but /dev/null or an fd.
export function redirect(sink: RedirectSink, node: Node): boolean {
  const op = node.children.find((c) => !c.isNamed)?.type ?? "";
  // `cat <<EOF > out`: the grammar hangs the redirects after the delimiter on the here-document.
  if (node.type === "heredoc_redirect")
    for (const r of node.childrenForFieldName("redirect")) if (REDIRECTS.has(r.type)) redirect(sink, r);
  if (node.type !== "file_redirect") return true;
  const dest = node.childForFieldName("destination");
  const target = dest ? wordOf(dest) : undefined;
  if (op === "<>") {
    // Opened for reading and writing (and created): both.
    sink.readTargets.push(target ?? { text: node.text, dynamic: true });
    sink.writes = true;
    sink.writeTargets.push(target ?? { text: node.text, dynamic: true });
    return true;
  }
  if (STDIN_REDIRECTS.has(op)) {
    const file = op === "<" || op === "&<" || (op === "<&" && !(target && /^(\d+|-)$/.test(target.text)));
    if (file) sink.readTargets.push(target ?? { text: node.text, dynamic: true });
    return true;
  }
  const harmless =
    target && !target.dynamic && (target.text === "/dev/null" || (/&$/.test(op) && /^(\d+|-)$/.test(target.text)));
  if (!harmless) {
    sink.writes = true;
    sink.writeTargets.push(target ?? { text: node.text, dynamic: true });
  }
  return false;
}

// An unquoted here-document is expanded by bash, and the grammar does not follow all of it:
// backquotes, substitutions in `<<-` bodies, and a line continuation that joins `EO\⏎F` into
// the delimiter (the lines after it are then commands, not data).
export function heredoc(sink: RedirectSink, node: Node) {
  const start = node.children.find((c) => c.type === "heredoc_start");
  const body = node.children.find((c) => c.type === "heredoc_body");
  if (!start || !body || /['"\\]/.test(start.text)) return;
  const text = body.text;
  // The grammar leaves a tab-indented `<<-` body unparsed; a `<<` body it does parse.
  const tabbed = node.children.some((c) => c.type === "<<-");
  const substitutions =
    /\$[([{]/.test(text) &&
    (tabbed || !hasDescendant(body, "command_substitution", "expansion", "arithmetic_expansion"));
  if (/`|\\\r?\n/.test(text) || substitutions)
    sink.opaque(node, "an unquoted here-document runs what it expands, and not all of it is followed");
}

// A line break in a bare word's text that no backslash escapes.
export function bareNewline(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === "\n") return true;
  }
  return false;
}
