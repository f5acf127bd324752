import { describe, expect, it } from "vitest";
import { changeMarks, NO_MARKS } from "./change-marks";

describe("changeMarks", () => {
  it("marks each changed file and every folder above it", () => {
    const m = changeMarks([
      { path: "src/a/b/c.ts", status: "modified" },
      { path: "src/a/new.ts", status: "added" },
      { path: "lib/gone.js", status: "deleted" },
      { path: "README.md", status: "modified" },
    ]);
    expect(Object.fromEntries(m.files)).toEqual({
      "src/a/b/c.ts": "modified",
      "src/a/new.ts": "added",
      "lib/gone.js": "deleted",
      "README.md": "modified",
    });
    expect([...m.folders].sort()).toEqual(["lib", "src", "src/a", "src/a/b"]);
  });

  it("does not mark a folder that only shares a name prefix", () => {
    const m = changeMarks([{ path: "srcx/file.ts", status: "added" }]);
    expect(m.folders.has("src")).toBe(false);
    expect(m.folders.has("srcx")).toBe(true);
  });

  it("has nothing to mark without changes", () => {
    expect(changeMarks(undefined)).toBe(NO_MARKS);
    expect(changeMarks([])).toBe(NO_MARKS);
  });
});
