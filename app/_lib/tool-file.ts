// Where a finished file tool's card leads in the editor: the workspace file it read, edited or
// wrote, as the tree names it, and for a change the first line it changed.
import type { ToolCard } from "./session-state";

const FILE_TOOLS = new Set(["read_file", "edit_file", "write_file"]);

export interface FileTarget {
  path: string;
  line?: number;
}

/** The tree's name for a tool's `path` argument: the model may write "./src/a.ts", or the
 *  absolute path inside the workspace, which ends with "/" and a path the tree knows. */
export function workspacePath(arg: string, known: readonly string[]): string {
  let p = arg
    .trim()
    .replace(/\/{2,}/g, "/")
    .replace(/\/+$/, "");
  while (p.startsWith("./")) p = p.slice(2);
  if (known.includes(p)) return p;
  if (p.startsWith("/")) {
    const inside = known.filter((k) => p.endsWith(`/${k}`)).sort((a, b) => b.length - a.length)[0];
    return inside ?? p.replace(/^\/+/, "");
  }
  return p;
}

/** The first line a unified diff adds or changes, counted in the new file. */
export function firstChangedLine(diff: string): number | undefined {
  let line: number | undefined;
  for (const row of diff.split("\n")) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(row);
    if (hunk) line = Number(hunk[1]);
    else if (line === undefined || row.startsWith("+++") || row.startsWith("---")) continue;
    else if (row.startsWith("+") || row.startsWith("-")) return Math.max(1, line);
    else line++;
  }
  return undefined;
}

/** The file a card can open, once its call has succeeded. */
export function toolFileTarget(
  card: Pick<ToolCard, "name" | "input" | "status" | "diff">,
  known: readonly string[],
): FileTarget | undefined {
  if (!FILE_TOOLS.has(card.name) || card.status !== "succeeded") return undefined;
  const arg = (card.input as { path?: unknown } | null | undefined)?.path;
  if (typeof arg !== "string" || !arg.trim()) return undefined;
  const path = workspacePath(arg, known);
  if (!path) return undefined;
  const line = card.diff ? firstChangedLine(card.diff) : undefined;
  return line === undefined ? { path } : { path, line };
}
