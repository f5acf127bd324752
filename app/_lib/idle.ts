// Running work once the page has nothing better to do (requestIdleCallback, with a timer where the
// browser lacks it). Returns the cancel function, for effect clean-ups.
export function whenIdle(fn: () => void, timeoutMs = 2000): () => void {
  if (typeof requestIdleCallback === "function") {
    const id = requestIdleCallback(fn, { timeout: timeoutMs });
    return () => cancelIdleCallback(id);
  }
  const t = setTimeout(fn, 200);
  return () => clearTimeout(t);
}
