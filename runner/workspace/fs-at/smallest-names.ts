// The `k` smallest names of a stream (a folder read entry by entry), for listings that show a
// folder's first names without holding the whole folder.

interface Named {
  name: string;
}

const byName = (a: Named, b: Named) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * The `k` smallest names offered, held in a max-heap of at most `k`: a folder streamed into it
 * costs memory for `k` entries whatever it holds (a listing of a folder of ten million files
 * read them all into one array first: about 100 bytes an entry of the runner's heap, which every
 * workspace on it shares). O(n log k), whatever names the agent chose.
 */
export class SmallestNames<T extends Named> {
  private readonly heap: T[] = [];
  /** How many were offered past the `k` kept. */
  dropped = 0;

  constructor(private readonly k: number) {}

  offer(e: T): void {
    const h = this.heap;
    if (h.length < this.k) {
      h.push(e);
      this.up(h.length - 1);
      return;
    }
    this.dropped++;
    if (this.k === 0 || e.name >= h[0].name) return;
    h[0] = e;
    this.down(0);
  }

  /** The kept names in name order. */
  sorted(): T[] {
    return [...this.heap].sort(byName);
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent].name >= h[i].name) return;
      [h[parent], h[i]] = [h[i], h[parent]];
      i = parent;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const [l, r] = [2 * i + 1, 2 * i + 2];
      let top = i;
      if (l < h.length && h[l].name > h[top].name) top = l;
      if (r < h.length && h[r].name > h[top].name) top = r;
      if (top === i) return;
      [h[top], h[i]] = [h[i], h[top]];
      i = top;
    }
  }
}
