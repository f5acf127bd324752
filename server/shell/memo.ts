// The memo behind analyseShell: one tool call is judged by the org policy, the session
// approvals, the read-only and danger classifiers and the card, each with the same line, so
// the line is parsed once and the answer shared. Shared answers are deep-frozen: no consumer
// can change what the next caller of the same line is told (a mutation throws). The memo is a
// least-recently-used map bounded twice, by entries and by the characters its keys and answers
// hold, so long lines cannot grow it without end; a line whose answer alone is over the
// character bound is analysed every time and never kept. Keys are the exact line: two lines
// that differ in one byte are two entries.
import { MAX_SOURCE } from "./parser";
import type { ShellAnalysis } from "./types";

export const MEMO_MAX_ENTRIES = 256;
/** Characters of lines and answers kept at most (a few MB of strings). */
export const MEMO_MAX_CHARS = 1_000_000;

interface Entry {
  analysis: ShellAnalysis;
  chars: number;
}

const entries = new Map<string, Entry>();
let heldChars = 0;
let analyses = 0;

/** How many analyses ran and what the memo holds, for tests and diagnostics. */
export function memoStats(): { analyses: number; entries: number; chars: number } {
  return { analyses, entries: entries.size, chars: heldChars };
}

/** The frozen analysis of `line`: from the memo, or from `analyse` (then kept when it fits). */
export function memoized(line: string, analyse: (line: string) => ShellAnalysis): ShellAnalysis {
  const hit = entries.get(line);
  if (hit) {
    // Re-inserted: a Map iterates in insertion order, so the first key is the least recently used.
    entries.delete(line);
    entries.set(line, hit);
    return hit.analysis;
  }
  analyses++;
  const analysis = deepFreeze(analyse(line));
  // Past MAX_SOURCE nothing is parsed: the answer costs nothing to make again.
  if (line.length > MAX_SOURCE) return analysis;
  const chars = line.length + charsOf(analysis);
  if (chars > MEMO_MAX_CHARS) return analysis;
  while (entries.size > 0 && (entries.size >= MEMO_MAX_ENTRIES || heldChars + chars > MEMO_MAX_CHARS)) {
    const [oldest, entry] = entries.entries().next().value as [string, Entry];
    entries.delete(oldest);
    heldChars -= entry.chars;
  }
  entries.set(line, { analysis, chars });
  heldChars += chars;
  return analysis;
}

/** Forgets every answer (tests that count analyses start from an empty memo). */
export function clearMemo(): void {
  entries.clear();
  heldChars = 0;
}

// The strings an answer holds: sources and words of each command, redirect targets, scripts.
function charsOf(a: ShellAnalysis): number {
  let n = 0;
  for (const c of a.commands) {
    n += c.source.length + (c.opaque?.length ?? 0) + (c.runsCode?.length ?? 0);
    for (const w of c.words) n += w.text.length;
    for (const x of c.assignments) n += x.length;
  }
  for (const t of [...a.writeTargets, ...a.readTargets]) n += t.text.length;
  for (const s of a.scripts) n += s.length;
  return n;
}

function deepFreeze<T>(value: T, seen = new WeakSet<object>()): T {
  if (value && typeof value === "object" && !seen.has(value)) {
    seen.add(value);
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v, seen);
  }
  return value;
}
