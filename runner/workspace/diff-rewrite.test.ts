// The patch a file's diff falls back to when jsdiff gives up (diff.ts): every old line removed,
// every new one added, in the same format jsdiff writes for such a change.
import { createTwoFilesPatch } from "diff";
import { describe, expect, it } from "vitest";
import { rewritePatch } from "./diff";

/** jsdiff's patch as diff.ts trims it: no "====" banner, no tab after the file names. */
const jsdiff = (a: string, b: string) =>
  createTwoFilesPatch("a/f", "b/f", a, b, "", "", { context: 3 })
    .split("\n")
    .slice(1)
    .map((l) => (l.startsWith("--- ") || l.startsWith("+++ ") ? l.replace(/\t$/, "") : l))
    .join("\n");

describe("rewritePatch", () => {
  it.each([
    ["both end in a newline", "one\ntwo\n", "three\nfour\nfive\n"],
    ["the old one does not", "one\ntwo", "three\n"],
    ["the new one does not", "one\n", "three\nfour"],
    ["neither does", "one", "two"],
    ["a new file", "", "one\ntwo\n"],
    ["an emptied file", "one\ntwo\n", ""],
  ])("writes what jsdiff writes for a change of every line: %s", (_, a, b) => {
    expect(rewritePatch("a/f", "b/f", a, b)).toBe(jsdiff(a, b));
  });
});
