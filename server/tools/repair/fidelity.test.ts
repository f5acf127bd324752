import { describe, expect, it } from "vitest";
import { isFaithfulPrefix } from "./fidelity";

describe("isFaithfulPrefix", () => {
  const original = { path: "a.ts", edits: [{ old: "abc", new: "xyz" }], n: 125 };
  it.each<[string, unknown, boolean]>([
    ["equal", original, true],
    ["empty object", {}, true],
    ["string prefix as last value", { path: "a." }, true],
    ["nested prefix", { path: "a.ts", edits: [{ old: "ab" }] }, true],
    ["shorter number last", { path: "a.ts", edits: original.edits, n: 12 }, true],
    ["non-prefix string", { path: "b" }, false],
    ["changed earlier value", { path: "a.tsx", edits: [] }, false],
    ["key out of order", { edits: [] }, false],
    ["extra key", { ...original, extra: 1 }, false],
    ["partial value not last", { path: "a.", edits: [] }, false],
  ])("%s", (_l, repaired, expected) => {
    expect(isFaithfulPrefix(repaired, original)).toBe(expected);
  });
});
