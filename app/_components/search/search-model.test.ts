import { describe, expect, it } from "vitest";
import { around, firstMatch } from "./search-model";

describe("search match finding", () => {
  it("finds literal text with smart case, as ripgrep does", () => {
    expect(firstMatch("const Alpha = alpha", { query: "alpha", regex: false })).toEqual([6, 11]);
    expect(firstMatch("const Alpha = alpha", { query: "Alpha", regex: false })).toEqual([6, 11]);
    expect(firstMatch("const ALPHA = alpha", { query: "Alpha", regex: false })).toBeUndefined();
    expect(firstMatch("const ALPHA", { query: "Alpha", regex: false, caseSensitive: false })).toEqual([6, 11]);
    expect(firstMatch("a.b", { query: ".", regex: false })).toEqual([1, 2]);
  });

  it("finds regex matches, and gives up quietly on syntax JavaScript does not share", () => {
    expect(firstMatch("let beeta = 1", { query: "be+ta\\s*=", regex: true })).toEqual([4, 11]);
    expect(firstMatch("x", { query: "(?x) x", regex: true })).toBeUndefined();
    expect(firstMatch("abc", { query: "z*", regex: true })).toBeUndefined();
    expect(firstMatch("abc", { query: "", regex: false })).toBeUndefined();
  });

  it("shows a long line from shortly before its match, without leading indentation", () => {
    expect(around("    return x;", [11, 12])).toEqual({ text: "return x;", match: [7, 8] });
    const line = `${"a".repeat(100)}needle`;
    const shown = around(line, [100, 106]);
    expect(shown.text.slice(shown.match![0], shown.match![1])).toBe("needle");
    expect(shown.text.startsWith("…")).toBe(true);
    expect(around("  plain", undefined)).toEqual({ text: "plain" });
  });
});
