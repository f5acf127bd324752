// Long synchronous file-system work (walking or removing a folder of 300,000 files) cut into
// slices of a few milliseconds with a turn of the event loop between them: one runner serves
// many workspaces on one loop, and each call stays synchronous so a slice does as much as the
// threadpool's async calls would in several times the time.
const SLICE_MS = 4;
/** Steps between looks at the clock: a step (an lstat, an unlink) takes a few microseconds. */
const STEPS_PER_LOOK = 64;

export class Slices {
  private started = Date.now();
  private steps = 0;

  /** True when this slice is spent: await `next()` before the next step. */
  due(): boolean {
    if (++this.steps % STEPS_PER_LOOK !== 0) return false;
    return Date.now() - this.started >= SLICE_MS;
  }

  /** The next slice, after everything else the event loop has waiting. */
  async next(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.started = Date.now();
  }
}
