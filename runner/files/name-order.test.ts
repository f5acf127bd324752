// inNameOrder against a full sort: every prefix a reader takes is the sorted prefix, whatever
// the order, size, repeats or spelling of the names, and a selection leaves no name out.
import { describe, expect, it } from "vitest";
import { inNameOrder, selectSmallest } from "./name-order";

const named = (names: string[]) => names.map((name) => ({ name }));
const sorted = (names: string[]) => [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const take = (names: string[], first: number, count = Infinity) => {
  const out: string[] = [];
  for (const e of inNameOrder(named(names), first)) {
    if (out.length >= count) break;
    out.push(e.name);
  }
  return out;
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

describe("inNameOrder", () => {
  it("gives every prefix in sorted order, and all the names when read to the end", () => {
    for (let seed = 1; seed <= 60; seed++) {
      const random = rng(seed);
      const n = Math.floor(random() * 3_000);
      // A small alphabet repeats names (a folder never does; the order must not need it).
      const names = randomNames(n, seed % 2 ? "ab" : "abcdefghijklmnopqrstuvwxyz0123456789._-", 12, random);
      const first = 1 + Math.floor(random() * 300);
      const want = sorted(names);
      expect(take(names, first), `seed ${seed}`).toEqual(want);
      const count = Math.floor(random() * n);
      expect(take(names, first, count), `seed ${seed}`).toEqual(want.slice(0, count));
    }
  });

  it("orders as `<` does: upper case before lower, code units not code points, empty first", () => {
    const names = ["b", "B", "a", "é", "e", "😀", "\uffff", "", "Z", "a1", "a10", "a2"];
    const many = [...names, ...randomNames(500, "xyz", 4, rng(7))];
    expect(take(many, 3)).toEqual(sorted(many));
    expect(take(names, 1).slice(0, 4)).toEqual(["", "B", "Z", "a"]);
  });

  it("takes names already in order, in reverse, or all alike", () => {
    const up = Array.from({ length: 5_000 }, (_, i) => `f${String(i).padStart(5, "0")}`);
    expect(take(up, 100, 250)).toEqual(up.slice(0, 250));
    expect(take([...up].reverse(), 100, 250)).toEqual(up.slice(0, 250));
    expect(take(Array(1_000).fill("same"), 10)).toEqual(Array(1_000).fill("same"));
    expect(take([], 10)).toEqual([]);
  });
});

describe("selectSmallest", () => {
  it("puts the smallest names before the boundary and the rest after it, for every boundary", () => {
    const random = rng(99);
    const names = randomNames(400, "abcdef", 5, random);
    for (let boundary = 0; boundary <= names.length; boundary += 7) {
      const a = named(names);
      selectSmallest(a, 0, a.length, boundary);
      const before = a.slice(0, boundary).map((e) => e.name);
      const after = a.slice(boundary).map((e) => e.name);
      expect(sorted([...before, ...after])).toEqual(sorted(names));
      if (before.length && after.length) expect(sorted(before).at(-1)! <= sorted(after)[0]).toBe(true);
    }
  });
});
