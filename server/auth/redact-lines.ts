// Redaction for a viewer of text that reaches them cut into lines: a search's matching lines, a
// diff's hunks. A secret may span lines (a private key's body between its BEGIN and END lines),
// and redacting each line alone misses it: a search for base64 lines returned a key's body line
// by line. So the secrets are found in the whole text (the file, each side of a hunk), then cut
// out of every line they cover.
import { FILE_LIMITS } from "../protocol/file-ops";
import { findSecrets, REDACTED } from "./redact";

/** Each line with what of it belongs to a secret of the joined lines replaced by REDACTED. */
export function redactLines(lines: readonly string[]): string[] {
  const text = lines.join("\n");
  const secrets = findSecrets(text);
  if (secrets.length === 0) return [...lines];
  const out: string[] = [];
  let start = 0;
  for (const line of lines) {
    const end = start + line.length;
    let kept = "";
    let at = start;
    for (const s of secrets) {
      if (s.end <= start || s.start >= end) continue;
      const cutFrom = Math.max(s.start, start);
      // Within the line, the rule's own replacement (it may keep a name: TOKEN=[redacted]).
      kept += text.slice(at, cutFrom) + (s.start >= start && s.end <= end ? s.replacement : REDACTED);
      at = Math.min(s.end, end);
    }
    out.push(at === start && kept === "" ? line : kept + text.slice(at, end));
    start = end + 1;
  }
  return out;
}

/**
 * A unified diff hunk's lines (" ctx", "-old", "+new", "\ No newline…"): the old side (context and
 * removed lines) and the new side (context and added lines) are each redacted as one text; a
 * context line shows whichever side redacted it.
 */
export function redactHunkLines(lines: readonly string[]): string[] {
  const sides = { old: [] as number[], new: [] as number[] };
  lines.forEach((l, i) => {
    if (l[0] === " " || l[0] === "-") sides.old.push(i);
    if (l[0] === " " || l[0] === "+") sides.new.push(i);
  });
  const out = [...lines];
  for (const indexes of [sides.old, sides.new]) {
    const redacted = redactLines(indexes.map((i) => lines[i].slice(1)));
    indexes.forEach((i, k) => {
      const line = lines[i][0] + redacted[k];
      if (line !== lines[i]) out[i] = line;
    });
  }
  return out;
}

/** A long line cut as the search cuts it (the runner's rg --max-columns). */
const preview = (line: string) =>
  line.length > FILE_LIMITS.searchMaxLineChars ? `${line.slice(0, FILE_LIMITS.searchMaxLineChars)} […]` : line;

export interface SearchMatches {
  files: { path: string; matches: { line: number; text: string }[] }[];
  matches: number;
  truncated: boolean;
}

/** Files whose matches a viewer's search redacts against the whole file; the rest are left out. */
const MAX_FILES_READ = 100;

/**
 * A search's matches as a viewer may see them: each file with matches is read whole and redacted
 * by redactLines, and a match shows its line from that. A file that cannot be read (gone, too
 * large) or beyond MAX_FILES_READ is left out and the results say they were cut.
 */
export async function redactSearch(
  found: SearchMatches,
  read: (path: string) => Promise<{ content: string }>,
): Promise<SearchMatches> {
  const files: SearchMatches["files"] = [];
  let truncated = found.truncated || found.files.length > MAX_FILES_READ;
  for (const file of found.files.slice(0, MAX_FILES_READ)) {
    const content = await read(file.path).then(
      (r) => r.content,
      () => undefined,
    );
    if (content === undefined) {
      truncated = true;
      continue;
    }
    const lines = redactLines(content.split("\n"));
    const matches = file.matches.flatMap((m) =>
      m.line <= lines.length ? [{ ...m, text: preview(lines[m.line - 1]) }] : [],
    );
    if (matches.length) files.push({ path: file.path, matches });
  }
  return { files, matches: files.reduce((n, f) => n + f.matches.length, 0), truncated };
}
