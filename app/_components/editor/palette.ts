// What the quick-open box is asked for, as in VS Code: a file by part of its path, a command
// after ">" (Ctrl+Shift+P starts there), a line of the open file after ":". Pure: the box
// (quick-open.tsx) shows what this returns.

export interface Command {
  id: string;
  label: string;
  /** The command's own keys, shown beside it. */
  keys?: string;
  run(): void;
}

export type PaletteQuery =
  { mode: "files"; text: string } | { mode: "commands"; text: string } | { mode: "line"; line: number | null };

export function paletteQuery(query: string): PaletteQuery {
  if (query.startsWith(">")) return { mode: "commands", text: query.slice(1).trim() };
  if (query.startsWith(":")) {
    const n = Number(query.slice(1).trim());
    return { mode: "line", line: Number.isInteger(n) && n > 0 ? n : null };
  }
  return { mode: "files", text: query };
}

/** Subsequence match with a bonus for runs and for the last path segment (VS Code's feel);
 *  0: no match. */
export function score(path: string, query: string): number {
  if (!query) return 1;
  const p = path.toLowerCase();
  const q = query.toLowerCase();
  const nameStart = p.lastIndexOf("/") + 1;
  let at = -1;
  let s = 0;
  for (const ch of q) {
    const next = p.indexOf(ch, at + 1);
    if (next < 0) return 0;
    s += next === at + 1 ? 3 : 1;
    if (next >= nameStart) s += 2;
    at = next;
  }
  return s - path.length / 1000;
}

/** The best `limit` of `items` for `query`, best first (all of them, in order, for no query). */
export function ranked<T>(items: readonly T[], query: string, text: (item: T) => string, limit = 50): T[] {
  return items
    .map((item) => ({ item, s: score(text(item), query) }))
    .filter((m) => m.s > 0)
    .sort((a, b) => b.s - a.s)
    .slice(0, limit)
    .map((m) => m.item);
}

/** For an empty query: the recently opened files still listed (the open one last, so Enter
 *  goes back to the one before, as VS Code's Ctrl+P), then the others in order. */
export function recentFirst(paths: readonly string[], recent: readonly string[], active: string | null): string[] {
  const listed = new Set(paths);
  const previous = recent.filter((p) => p !== active && listed.has(p));
  const first = active && listed.has(active) ? [...previous, active] : previous;
  const taken = new Set(first);
  return [...first, ...paths.filter((p) => !taken.has(p))];
}

/** Commands match on their words in any order ("term new" finds "Terminal: New Terminal"). */
export function matchCommands(commands: readonly Command[], text: string): Command[] {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...commands];
  return commands
    .map((c) => ({
      c,
      s: words.reduce(
        (sum, w) =>
          sum < 0 ? sum : c.label.toLowerCase().includes(w) ? sum + 2 : score(c.label, w) > 0 ? sum + 1 : -1,
        0,
      ),
    }))
    .filter((m) => m.s > 0)
    .sort((a, b) => b.s - a.s)
    .map((m) => m.c);
}
