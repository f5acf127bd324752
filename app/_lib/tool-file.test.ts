import { describe, expect, it } from "vitest";
import { firstChangedLine, toolFileTarget, workspacePath } from "./tool-file";

const known = ["src/a.ts", "a.ts", "notes/plan.md"];

describe("workspacePath", () => {
  it("names the file as the tree does", () => {
    expect(workspacePath("src/a.ts", known)).toBe("src/a.ts");
    expect(workspacePath("./src//a.ts", known)).toBe("src/a.ts");
    expect(workspacePath("/home/me/project/src/a.ts", known)).toBe("src/a.ts");
    expect(workspacePath("/home/me/project/a.ts", known)).toBe("a.ts");
    // Not known yet (a file just written): the argument, made relative.
    expect(workspacePath("./new/file.ts", known)).toBe("new/file.ts");
  });
});

describe("firstChangedLine", () => {
  it("counts to the first added or removed row of the first hunk", () => {
    const diff = ["--- a/x", "+++ b/x", "@@ -18,7 +18,7 @@", " a", " b", " c", "-old", "+new", " d", ""].join("\n");
    expect(firstChangedLine(diff)).toBe(21);
    expect(firstChangedLine(["--- /dev/null", "+++ b/n.md", "@@ -0,0 +1,2 @@", "+# Plan", "+"].join("\n"))).toBe(1);
    expect(firstChangedLine("no diff here")).toBeUndefined();
  });
});

describe("toolFileTarget", () => {
  it("opens what a succeeded file tool touched, at its first change", () => {
    const diff = ["--- a/src/a.ts", "+++ b/src/a.ts", "@@ -4,3 +4,3 @@", " x", "-y", "+z", ""].join("\n");
    expect(
      toolFileTarget({ name: "edit_file", input: { path: "./src/a.ts" }, status: "succeeded", diff }, known),
    ).toEqual({ path: "src/a.ts", line: 5 });
    expect(toolFileTarget({ name: "read_file", input: { path: "a.ts" }, status: "succeeded" }, known)).toEqual({
      path: "a.ts",
    });
    expect(toolFileTarget({ name: "write_file", input: { path: "a.ts" }, status: "rejected" }, known)).toBeUndefined();
    expect(toolFileTarget({ name: "shell", input: { command: "ls" }, status: "succeeded" }, known)).toBeUndefined();
    expect(toolFileTarget({ name: "read_file", input: { path: 3 }, status: "succeeded" }, known)).toBeUndefined();
  });
});
