import { describe, expect, it } from "vitest";
import { parseJsonText } from "./json-text";

describe("parseJsonText", () => {
  it("gives the parsed value of JSON text, whatever JSON it holds", () => {
    expect(parseJsonText('["auto"]', () => "x")).toEqual(["auto"]);
    expect(parseJsonText("null", () => "x")).toBeNull();
    expect(parseJsonText('"auto"', () => "x")).toBe("auto");
  });

  it("hands text that does not parse to the caller's fallback, unchanged", () => {
    const seen: string[] = [];
    expect(parseJsonText("[auto", (text) => (seen.push(text), "kept"))).toBe("kept");
    expect(parseJsonText("", () => undefined)).toBeUndefined();
    expect(seen).toEqual(["[auto"]);
  });
});
