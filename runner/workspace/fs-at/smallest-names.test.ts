// SmallestNames against a full sort: the k names it keeps are the sorted prefix of k, whatever
// the order, size, repeats or spelling of the names offered, and it says how many it dropped.
import { describe, expect, it } from "vitest";
import { SmallestNames } from "./smallest-names";

const sorted = (names: string[]) => [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const smallest = (names: string[], k: number) => {
  const kept = new SmallestNames<{ name: string }>(k);
  for (const name of names) kept.offer({ name });
  return { names: kept.sorted().map((e) => e.name), dropped: kept.dropped };
};

/** A seeded generator: a failing case names its seed and can be run again. */
function rng(seed: number) {
  return () => (seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0) / 2 ** 32;
}

function randomNames(n: number, alphabet: string, length: number, random: () => number): string[] {
  return Array.from({ length: n }, () =>
    Array.from(
      { length: 1 + Math.floor(random() * length) },
      () => alphabet[Math.floor(random() * alphabet.length)],
    ).join(""),
  );
}

describe("SmallestNames", () => {
  it("keeps the sorted prefix of k, and counts the rest", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const random = rng(seed);
      const n = Math.floor(random() * 3_000);
      // A small alphabet repeats names (a folder never does; the order must not need it).
      const names = randomNames(n, seed % 2 ? "ab" : "abcdefghijklmnopqrstuvwxyz0123456789._-", 12, random);
      const k = Math.floor(random() * 400);
      const got = smallest(names, k);
      expect(got.names, `seed ${seed}`).toEqual(sorted(names).slice(0, k));
      expect(got.dropped, `seed ${seed}`).toBe(Math.max(0, n - k));
    }
  });

  it("orders as `<` does: upper case before lower, code units not code points, empty first", () => {
    const names = ["b", "B", "a", "é", "e", "😀", "\uffff", "", "Z", "a1", "a10", "a2"];
    expect(smallest(names, 4).names).toEqual(["", "B", "Z", "a"]);
    expect(smallest(names, 100).names).toEqual(sorted(names));
  });

  it("takes names already in order, in reverse, or all alike", () => {
    const up = Array.from({ length: 5_000 }, (_, i) => `f${String(i).padStart(5, "0")}`);
    expect(smallest(up, 250).names).toEqual(up.slice(0, 250));
    expect(smallest([...up].reverse(), 250).names).toEqual(up.slice(0, 250));
    expect(smallest(Array(1_000).fill("same"), 10).names).toEqual(Array(10).fill("same"));
    expect(smallest([], 10)).toEqual({ names: [], dropped: 0 });
    expect(smallest(["a", "b"], 0)).toEqual({ names: [], dropped: 2 });
  });
});
