// Grouping and concurrency: consecutive calls that are read-only, concurrency-safe, approval-
// free and not interactive form one batch and run together (at most `cap` at a time); every
// other call runs alone. Results land in their slot index, so completion order never matters
// and a call that throws fails only its own slot.

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

/** Runs `fn` over `items` with at most `cap` in flight; result i belongs to item i. */
export async function runPool<T, R>(
  items: T[],
  cap: number,
  fn: (item: T, index: number) => Promise<R>,
  onError: (e: unknown, item: T) => R,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i], i);
      } catch (e) {
        results[i] = onError(e, items[i]);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(cap, items.length)) }, worker));
  return results;
}
