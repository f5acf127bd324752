// Grouping and concurrency: consecutive calls that are read-only, concurrency-safe, approval-
// free and not interactive form one batch and run together (at most `cap` at a time), each
// starting as soon as it is planned; every other call runs alone. Results land in their slot,
// so completion order never matters and a call that throws fails only its own slot.

export interface Batchable {
  batchable: boolean;
}

/** Splits planned calls into runs: a batch of batchable neighbours, or a single other call. */
export function groupCalls<T extends Batchable>(items: T[]): T[][] {
  const groups: T[][] = [];
  let batch: T[] = [];
  for (const item of items) {
    if (item.batchable) {
      batch.push(item);
      continue;
    }
    if (batch.length > 0) groups.push(batch);
    batch = [];
    groups.push([item]);
  }
  if (batch.length > 0) groups.push(batch);
  return groups;
}

/**
 * A batch whose calls start as they are added, so the first ones run while later ones are still
 * being planned (each plan writes its row and events). Nothing starts before `start()` (the
 * session's read lock is held); then at most `cap` run at once. `drained()` resolves once the
 * batch is closed and every call has finished; a call that throws goes to `onError` alone.
 */
export function livePool<T>(cap: number, fn: (item: T) => Promise<void>, onError: (e: unknown, item: T) => void) {
  const waiting: T[] = [];
  let started = false;
  let closed = false;
  let running = 0;
  let done!: () => void;
  const drained = new Promise<void>((r) => (done = r));
  const settleIfDone = () => {
    if (closed && running === 0 && waiting.length === 0) done();
  };
  const pump = () => {
    while (started && running < Math.max(1, cap) && waiting.length > 0) {
      const item = waiting.shift()!;
      running++;
      void fn(item)
        .catch((e: unknown) => onError(e, item))
        .finally(() => {
          running--;
          pump();
          settleIfDone();
        });
    }
  };
  return {
    add(item: T) {
      waiting.push(item);
      pump();
    },
    start(): Promise<void> {
      started = true;
      pump();
      settleIfDone();
      return drained;
    },
    close() {
      closed = true;
      settleIfDone();
    },
  };
}
