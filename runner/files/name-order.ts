// A folder's entries in name order, sorted only as far as a listing reads them. list_files
// stops at its limit (1,000 by default), and a folder of 100,000 entries in the disk's own
// order (hash order on ext4) took 70–130 ms of the runner's event loop, which every workspace
// on it shares, to sort whole for its first thousand names. Here the smallest names are
// selected first (a quickselect, O(n)) and only they are sorted; a reader that goes on past
// them gets the next, twice as many, the same way.

interface Named {
  name: string;
}

/**
 * Yields `entries` in name order (UTF-16 code units, as `<` compares), reordering the array in
 * place. `first`: how many the caller expects to read; reading further costs one more selection
 * per doubling.
 */
export function* inNameOrder<T extends Named>(entries: T[], first: number): Generator<T> {
  let from = 0;
  let take = Math.max(first, 64);
  while (from < entries.length) {
    const end = entries.length - from <= 2 * take ? entries.length : from + take;
    if (end < entries.length) selectSmallest(entries, from, entries.length, end);
    const part = entries.slice(from, end).sort(byName);
    yield* part;
    from = end;
    take *= 2;
  }
}

const byName = (a: Named, b: Named) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Reorders `a[lo, hi)` so that `a[lo, boundary)` holds its smallest names (in no order) and
 * `a[boundary, hi)` the rest. Pivots are random: the names are the agent's to choose, and a
 * fixed rule (say, the median of three) can be given names that make every partition lopsided,
 * which is quadratic.
 */
export function selectSmallest(a: Named[], lo: number, hi: number, boundary: number): void {
  let left = lo;
  let right = hi - 1;
  while (left < right) {
    const pivot = a[left + Math.floor(Math.random() * (right - left + 1))].name;
    let i = left;
    let j = right;
    while (i <= j) {
      while (a[i].name < pivot) i++;
      while (a[j].name > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    // Now a[left, j] ≤ pivot ≤ a[i, right], and what lies between equals the pivot.
    if (boundary <= j) right = j;
    else if (boundary > i) left = i;
    else return;
  }
}
