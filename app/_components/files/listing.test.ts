import { describe, expect, it } from "vitest";
import { mergeListings } from "./listing";

const f = (path: string) => ({ path, type: "file" as const });
const d = (path: string) => ({ path, type: "dir" as const });

describe("the tree's listing of a large workspace", () => {
  it("adds what a folder read found that the capped listing missed", () => {
    const whole = [d("a"), d("b"), f("a/1.ts")];
    const merged = mergeListings(whole, [
      { folder: "b", entries: [d("b/c"), f("b/2.ts")] },
      { folder: "a", entries: [f("a/1.ts"), f("a/3.ts")] },
    ]);
    expect(merged.map((e) => e.path).sort()).toEqual(["a", "a/1.ts", "a/3.ts", "b", "b/2.ts", "b/c"]);
  });

  it("takes the folder read as the newer word: a child it lacks goes, with everything under it", () => {
    const whole = [d("a"), d("a/old"), f("a/old/x.ts"), f("a/keep.ts"), f("ab.ts"), d("a2"), f("a2/y.ts")];
    const merged = mergeListings(whole, [{ folder: "a", entries: [f("a/keep.ts")] }]);
    expect(merged.map((e) => e.path).sort()).toEqual(["a", "a/keep.ts", "a2", "a2/y.ts", "ab.ts"]);
  });

  it('reads the root as the folder ""', () => {
    expect(
      mergeListings([d("a"), f("gone.ts")], [{ folder: "", entries: [d("a"), f("new.ts")] }]).map((e) => e.path),
    ).toEqual(["a", "new.ts"]);
  });

  it("leaves the listing as it was when no folder was read", () => {
    const whole = [f("x")];
    expect(mergeListings(whole, [])).toBe(whole);
  });
});
