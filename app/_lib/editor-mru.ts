// Ctrl+Tab between open editors in the order they were last used, as VS Code does: the first
// press offers the editor used before this one, more presses with Ctrl held walk further back,
// and letting go of Ctrl opens the one offered. Browsers keep Ctrl+Tab for their own tabs in a
// normal window (the page never hears it); it reaches the page in an installed app's window
// and under automation, so Ctrl+Alt+Tab does the same everywhere.

/** Open editors, the active first, then by last use; never-used ones in tab order at the end. */
export function mruOrder(open: readonly string[], recent: readonly string[], active: string | null): string[] {
  const order: string[] = [];
  const add = (p: string | null) => p && open.includes(p) && !order.includes(p) && order.push(p);
  add(active);
  for (const p of recent) add(p);
  for (const p of open) add(p);
  return order;
}

/** Which way a key walks the list: Ctrl+Tab (or Ctrl+Alt+Tab) back, with Shift forward. */
export function mruStep(
  e: Pick<KeyboardEvent, "ctrlKey" | "metaKey" | "altKey" | "shiftKey" | "key">,
): 1 | -1 | undefined {
  if (e.key !== "Tab" || !e.ctrlKey || e.metaKey) return undefined;
  return e.shiftKey ? -1 : 1;
}

/** The next index offered from `index` in a list of `length`, wrapping. */
export function stepIndex(index: number, length: number, step: 1 | -1): number {
  return (index + step + length) % length;
}
