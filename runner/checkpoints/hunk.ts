// Taking one hunk of a diff back out of a file as it is now: the hunk's new side must still be
// in the file, at its line or near it (the file may have moved under later hunks), and is
// replaced by its old side. Lines are compared with their endings, so a changed ending or a
// missing last newline is a difference too; anything else is a conflict and nothing is written.

export interface HunkSides {
  old: string[];
  new: string[];
}

/** The two sides of a hunk from git's lines (" ctx", "-old", "+new", "\ No newline at end of file"). */
export function hunkSides(lines: string[]): HunkSides {
  const sides: HunkSides = { old: [], new: [] };
  let last: "old" | "new" | "both" | undefined;
  for (const line of lines) {
    const kind = line[0];
    const text = line.slice(1);
    if (kind === "\\") {
      // The line before it has no newline: take the one added after it back off.
      if (last === "old" || last === "both")
        sides.old[sides.old.length - 1] = sides.old[sides.old.length - 1].slice(0, -1);
      if (last === "new" || last === "both")
        sides.new[sides.new.length - 1] = sides.new[sides.new.length - 1].slice(0, -1);
      continue;
    }
    if (kind === " ") {
      sides.old.push(`${text}\n`);
      sides.new.push(`${text}\n`);
      last = "both";
    } else if (kind === "-") {
      sides.old.push(`${text}\n`);
      last = "old";
    } else if (kind === "+") {
      sides.new.push(`${text}\n`);
      last = "new";
    } else throw new Error(`not a hunk line: ${JSON.stringify(line.slice(0, 40))}`);
  }
  return sides;
}

/** A text's lines, each with its own ending (the last may have none). */
export function splitLines(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", start)) {
    out.push(text.slice(start, i + 1));
    start = i + 1;
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

/** How far from its line a hunk is looked for. */
const REACH = 2000;

/** `text` with the hunk's new side (starting near line `newStart`) put back to its old side; null: not found. */
export function revertHunk(text: string, newStart: number, lines: string[]): string | null {
  const sides = hunkSides(lines);
  const file = splitLines(text);
  // "+c,0" names the line after which nothing is left: the hunk sits just after it.
  const want = sides.new.length === 0 ? newStart : Math.max(0, newStart - 1);
  const matches = (at: number) =>
    at >= 0 && at + sides.new.length <= file.length && sides.new.every((l, i) => file[at + i] === l);
  for (let d = 0; d <= REACH; d++) {
    for (const at of d === 0 ? [want] : [want - d, want + d]) {
      if (matches(at)) return [...file.slice(0, at), ...sides.old, ...file.slice(at + sides.new.length)].join("");
    }
  }
  return null;
}
