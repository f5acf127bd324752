// A file's unified diff (as the runner's checkpoint.diff gives it) cut into hunks, each with an
// id that is a hash of its header and lines: the same change keeps its id across reads, so the
// person's Accept or Revert of it (HunkReview rows) finds it again.
import { createHash } from "node:crypto";

export interface ParsedHunk {
  id: string;
  /** "@@ -a,b +c,d @@" */
  header: string;
  /** Each starts with " ", "+" or "-" ("\ No newline at end of file" markers kept for the revert). */
  lines: string[];
  /** Where its new side starts in the later file (1-based; "+c,0": the line after which it would sit). */
  newStart: number;
}

const HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

export function hunkId(header: string, lines: string[]): string {
  return createHash("sha256").update(header).update("\n").update(lines.join("\n")).digest("hex").slice(0, 16);
}

export function parseHunks(patch: string): ParsedHunk[] {
  const hunks: ParsedHunk[] = [];
  let current: { header: string; lines: string[]; newStart: number } | undefined;
  const close = () => {
    if (current) hunks.push({ ...current, id: hunkId(current.header, current.lines) });
    current = undefined;
  };
  const rows = patch.split("\n");
  if (rows.at(-1) === "") rows.pop();
  for (const row of rows) {
    const m = HEADER.exec(row);
    if (m) {
      close();
      current = { header: m[0], lines: [], newStart: Number(m[3]) };
    } else if (current && (row.startsWith(" ") || row.startsWith("+") || row.startsWith("-") || row.startsWith("\\"))) {
      current.lines.push(row);
    } else if (current && row === "") {
      // An empty context line loses its space in some tools' output; git keeps it, but be lenient.
      current.lines.push(" ");
    } else close();
  }
  close();
  return hunks;
}
