// For tests of work that must leave the runner's event loop turning: the longest time the loop
// went without running a 2 ms timer while the work ran.
export async function longestStall<T>(work: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 2);
  try {
    const value = await work();
    return { value, stallMs: Math.max(stallMs, performance.now() - last) };
  } finally {
    clearInterval(probe);
  }
}
