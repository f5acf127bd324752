import { describe, expect, it } from "vitest";
import { checkName, initialName, lookup, nameSelection, type TreeEdit } from "./tree-edit";

const exists = lookup([
  { path: "src", type: "dir" },
  { path: "src/a.ts", type: "file" },
  { path: "src/lib", type: "dir" },
  { path: "README.md", type: "file" },
]);
const newFile = (parent: string): TreeEdit => ({ kind: "new", type: "file", parent });
const rename = (path: string, type: "file" | "dir" = "file"): TreeEdit => ({ kind: "rename", path, type });

describe("the tree's inline name box", () => {
  it("takes a name relative to the folder it is in, folders included", () => {
    expect(checkName(newFile(""), "notes.md", exists)).toEqual({ ok: true, path: "notes.md", unchanged: false });
    expect(checkName(newFile("src"), "  b.ts ", exists)).toEqual({ ok: true, path: "src/b.ts", unchanged: false });
    expect(checkName(newFile("src"), "new/deep/c.ts", exists)).toEqual({
      ok: true,
      path: "src/new/deep/c.ts",
      unchanged: false,
    });
    expect(checkName(rename("src/a.ts"), "lib/a.ts", exists)).toEqual({
      ok: true,
      path: "src/lib/a.ts",
      unchanged: false,
    });
  });

  it("says why a name cannot be used", () => {
    const message = (edit: TreeEdit, name: string) => {
      const r = checkName(edit, name, exists);
      return r.ok ? "ok" : r.message;
    };
    expect(message(newFile(""), "   ")).toMatch(/must be provided/);
    expect(message(newFile("src"), "a.ts")).toMatch(/a\.ts already exists here/);
    expect(message(newFile(""), "src")).toMatch(/already exists/);
    expect(message(newFile(""), "/etc/passwd")).toMatch(/cannot start with \//);
    expect(message(newFile("src"), "../x.ts")).toMatch(/\. or \.\./);
    expect(message(newFile("src"), "a//b.ts")).toMatch(/empty folder/);
    expect(message(newFile("src"), "dir/")).toMatch(/end with \//);
    expect(message(newFile(""), "win\\path.ts")).toMatch(/Use \//);
    expect(message(newFile(""), ".git/config")).toMatch(/\.git/);
    expect(message(newFile(""), "README.md/x")).toMatch(/README\.md is a file/);
    expect(message(rename("src", "dir"), "src/inner")).toMatch(/into itself/);
  });

  it("treats the current name as no change, not a clash", () => {
    expect(checkName(rename("src/a.ts"), "a.ts", exists)).toEqual({ ok: true, path: "src/a.ts", unchanged: true });
  });

  it("starts a rename with the name, its stem selected", () => {
    expect(initialName(rename("src/notes.test.ts"))).toBe("notes.test.ts");
    expect(initialName(newFile("src"))).toBe("");
    expect(nameSelection("notes.test.ts")).toEqual([0, 10]);
    expect(nameSelection(".env")).toEqual([0, 4]);
    expect(nameSelection("Makefile")).toEqual([0, 8]);
  });
});
