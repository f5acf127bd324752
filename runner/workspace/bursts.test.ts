// Which folders a burst of changes names: those with many changes directly in them, the root as "".
import { describe, expect, it } from "vitest";
import { burstFolders } from "./bursts";

const many = (dir: string, n: number) => Array.from({ length: n }, (_, i) => `${dir}f${i}`);

describe("burstFolders", () => {
  it("names a folder with at least the threshold of changes directly in it, not its parents", () => {
    expect(burstFolders([...many("src/a/", 5), ...many("src/", 2), "b"], 5)).toEqual(["src/a"]);
  });
  it("names the root as the empty path", () => {
    expect(burstFolders(many("", 3), 3)).toEqual([""]);
  });
  it("names nothing below the threshold", () => {
    expect(burstFolders([...many("x/", 63), ...many("", 63)])).toEqual([]);
  });
});
