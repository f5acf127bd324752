import { describe, expect, it } from "vitest";
import { ancestors, buildTree, treeKey, visibleRows } from "./tree-model";

const entries = [
  { path: "src", type: "dir" as const },
  { path: "src/a.ts", type: "file" as const },
  { path: "src/lib", type: "dir" as const },
  { path: "src/lib/b.ts", type: "file" as const },
  { path: "empty", type: "dir" as const },
  { path: "README.md", type: "file" as const },
];
const tree = buildTree(entries);
const rows = (open: string[]) => visibleRows(tree, new Set(open));

describe("file tree model and keyboard", () => {
  it("names the folders that hold a file, outermost first", () => {
    expect(ancestors("a/b/c.ts")).toEqual(["a", "a/b"]);
    expect(ancestors("top.ts")).toEqual([]);
  });

  it("lists only the rows on screen, folders first, with their depth", () => {
    expect(rows([]).map((r) => r.path)).toEqual(["empty", "src", "README.md"]);
    expect(rows(["src", "src/lib"]).map((r) => `${r.depth}:${r.path}`)).toEqual([
      "0:empty",
      "0:src",
      "1:src/lib",
      "2:src/lib/b.ts",
      "1:src/a.ts",
      "0:README.md",
    ]);
    // A folder inside a closed one stays hidden even when it is marked open.
    expect(rows(["src/lib"]).map((r) => r.path)).toEqual(["empty", "src", "README.md"]);
  });

  it("moves the selection with the arrows, Home and End, stopping at the ends", () => {
    const r = rows(["src"]);
    expect(treeKey("ArrowDown", r, null)).toEqual({ type: "select", path: "empty" });
    expect(treeKey("ArrowUp", r, null)).toEqual({ type: "select", path: "empty" });
    expect(treeKey("ArrowDown", r, "src")).toEqual({ type: "select", path: "src/lib" });
    expect(treeKey("ArrowUp", r, "src/lib")).toEqual({ type: "select", path: "src" });
    expect(treeKey("ArrowDown", r, "README.md")).toEqual({ type: "select", path: "README.md" });
    expect(treeKey("ArrowUp", r, "empty")).toEqual({ type: "select", path: "empty" });
    expect(treeKey("End", r, "src")).toEqual({ type: "select", path: "README.md" });
    expect(treeKey("Home", r, "src/a.ts")).toEqual({ type: "select", path: "empty" });
    // A selection that scrolled out of view (its folder was closed) starts over at the top.
    expect(treeKey("ArrowDown", rows([]), "src/a.ts")).toEqual({ type: "select", path: "empty" });
  });

  it("opens, enters, closes and leaves folders with Right and Left", () => {
    expect(treeKey("ArrowRight", rows([]), "src")).toEqual({ type: "expand", path: "src" });
    expect(treeKey("ArrowRight", rows(["src"]), "src")).toEqual({ type: "select", path: "src/lib" });
    expect(treeKey("ArrowRight", rows(["empty"]), "empty")).toBeUndefined();
    expect(treeKey("ArrowRight", rows([]), "README.md")).toBeUndefined();
    expect(treeKey("ArrowLeft", rows(["src"]), "src")).toEqual({ type: "collapse", path: "src" });
    expect(treeKey("ArrowLeft", rows(["src", "src/lib"]), "src/lib/b.ts")).toEqual({ type: "select", path: "src/lib" });
    expect(treeKey("ArrowLeft", rows(["src"]), "src/a.ts")).toEqual({ type: "select", path: "src" });
    expect(treeKey("ArrowLeft", rows([]), "README.md")).toBeUndefined();
  });

  it("opens files and toggles folders with Enter; F2 and Delete act on a selection only", () => {
    expect(treeKey("Enter", rows(["src"]), "src/a.ts")).toEqual({ type: "open", path: "src/a.ts" });
    expect(treeKey("Enter", rows([]), "src")).toEqual({ type: "expand", path: "src" });
    expect(treeKey("Enter", rows(["src"]), "src")).toEqual({ type: "collapse", path: "src" });
    expect(treeKey("F2", rows([]), "README.md")).toEqual({ type: "rename" });
    expect(treeKey("Delete", rows([]), "README.md")).toEqual({ type: "delete" });
    expect(treeKey("F2", rows([]), null)).toBeUndefined();
    expect(treeKey("Delete", rows([]), null)).toBeUndefined();
    expect(treeKey("a", rows([]), "README.md")).toBeUndefined();
    expect(treeKey("ArrowDown", [], null)).toBeUndefined();
  });
});
