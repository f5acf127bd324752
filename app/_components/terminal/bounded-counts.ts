// Repeat counts a program's output gives xterm, bounded by the screen. xterm runs insert and
// delete lines (CSI n L, M), scroll (S, T), repeat the last character (b) and tab forward (I) once
// per count, up to 2,147,483,647, on the page's main thread: `printf '\e[2147483647L'` (14 bytes)
// froze the IDE's tab for hours, 200,000 for 3 s, and a reload replays the output. A count past
// what the screen can show changes nothing a smaller one would not (a whole region cleared or
// scrolled, a screen filled), and no real program sends one: such a sequence is dropped.
import type { IDisposable, Terminal } from "@xterm/xterm";

/** The largest count each sequence keeps, for a screen of `cols` by `rows`. */
const LIMITS: Record<string, (cols: number, rows: number) => number> = {
  L: (_c, rows) => rows,
  M: (_c, rows) => rows,
  S: (_c, rows) => rows,
  T: (_c, rows) => rows,
  b: (cols, rows) => cols * rows,
  I: (cols) => cols,
};

/** Registers the bound on `t`'s parser; dispose removes it. */
export function boundCounts(t: Terminal): IDisposable {
  const handlers = Object.entries(LIMITS).map(([final, limit]) =>
    // true: handled here (dropped); false: xterm's own handler runs.
    t.parser.registerCsiHandler({ final }, (params) => {
      const first = params[0];
      const count = Array.isArray(first) ? first[0] : first;
      return (count ?? 0) > limit(t.cols, t.rows);
    }),
  );
  return { dispose: () => handlers.forEach((h) => h.dispose()) };
}
