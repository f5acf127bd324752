// A read-write lock per session: a batch of read-only calls holds it shared, every other call
// holds it exclusively, so a serial call never overlaps anything else of the session (even a
// settled approval of an earlier, interrupted turn). Writers are served in arrival order and a
// waiting writer holds back later readers, so writes are not starved.

interface Waiter {
  write: boolean;
  grant(): void;
}

export class RwLock {
  private readers = 0;
  private writer = false;
  private queue: Waiter[] = [];

  get idle(): boolean {
    return !this.writer && this.readers === 0 && this.queue.length === 0;
  }

  read(): Promise<() => void> {
    return this.acquire(false);
  }

  write(): Promise<() => void> {
    return this.acquire(true);
  }

  private acquire(write: boolean): Promise<() => void> {
    return new Promise((resolve) => {
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        if (write) this.writer = false;
        else this.readers--;
        this.pump();
      };
      this.queue.push({ write, grant: () => resolve(release) });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.writer) {
      const next = this.queue[0];
      if (next.write) {
        if (this.readers > 0) return;
        this.queue.shift();
        this.writer = true;
        next.grant();
        return;
      }
      this.queue.shift();
      this.readers++;
      next.grant();
    }
  }
}

/** One lock per key, dropped when idle so finished sessions leave nothing behind. */
export class LockTable {
  private locks = new Map<string, RwLock>();

  async hold<T>(key: string, write: boolean, fn: () => Promise<T>): Promise<T> {
    let lock = this.locks.get(key);
    if (!lock) this.locks.set(key, (lock = new RwLock()));
    const release = await (write ? lock.write() : lock.read());
    try {
      return await fn();
    } finally {
      release();
      if (lock.idle && this.locks.get(key) === lock) this.locks.delete(key);
    }
  }
}
