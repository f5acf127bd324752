import { describe, expect, it } from "vitest";
import { mruOrder, mruStep, stepIndex } from "./editor-mru";

describe("editor MRU", () => {
  it("puts the active editor first, then the others by last use, then never-used tabs", () => {
    expect(mruOrder(["a", "b", "c", "d"], ["c", "gone", "a", "b"], "b")).toEqual(["b", "c", "a", "d"]);
    expect(mruOrder([], ["x"], null)).toEqual([]);
    expect(mruOrder(["a"], [], null)).toEqual(["a"]);
  });

  it("reads Ctrl+Tab and Ctrl+Alt+Tab as back, with Shift as forward, and nothing else", () => {
    const key = (o: Partial<KeyboardEvent>) => ({
      ctrlKey: false,
      metaKey: false,
      altKey: false,
      shiftKey: false,
      key: "Tab",
      ...o,
    });
    expect(mruStep(key({ ctrlKey: true }))).toBe(1);
    expect(mruStep(key({ ctrlKey: true, altKey: true }))).toBe(1);
    expect(mruStep(key({ ctrlKey: true, shiftKey: true }))).toBe(-1);
    expect(mruStep(key({}))).toBeUndefined();
    expect(mruStep(key({ ctrlKey: true, key: "a" }))).toBeUndefined();
  });

  it("wraps around the list both ways", () => {
    expect(stepIndex(2, 3, 1)).toBe(0);
    expect(stepIndex(0, 3, -1)).toBe(2);
  });
});
