import { describe, expect, it } from "vitest";
import { Bm25Index, tokenize } from "./bm25";

describe("tokenize", () => {
  it.each([
    ["readFile", ["read", "file"]],
    ["github_create-PR", ["github", "create", "pr"]],
    ["Creates the issues in a repository", ["create", "issue", "repository"]],
    ["running tests", ["run", "test"]],
    ["filling", ["fill"]],
    ["", []],
  ])("%j → %j", (text, tokens) => {
    expect(tokenize(text)).toEqual(tokens);
  });
});

describe("Bm25Index", () => {
  const docs = [
    [
      { text: "read_file", weight: 3 },
      { text: "Reads a file from the workspace.", weight: 1 },
    ],
    [
      { text: "write_file", weight: 3 },
      { text: "Writes a file to the workspace.", weight: 1 },
    ],
    [
      { text: "web_search", weight: 3 },
      { text: "Searches the web.", weight: 1 },
    ],
    [
      { text: "file_search", weight: 3 },
      { text: "Finds files by name in the workspace; a file finder.", weight: 1 },
    ],
  ];
  const index = new Bm25Index(docs);

  it("ranks name matches above description matches", () => {
    expect(index.search("write", 3).map((h) => h.doc)).toEqual([1]);
    expect(index.search("search", 3).map((h) => h.doc)).toEqual([2, 3]);
  });

  it("rare terms weigh more than common ones", () => {
    const hits = index.search("workspace web", 4);
    expect(hits[0].doc).toBe(2);
  });

  it("returns at most limit hits, best first, and nothing for unknown terms", () => {
    const hits = index.search("file", 2);
    expect(hits).toHaveLength(2);
    expect(hits[0].score).toBeGreaterThanOrEqual(hits[1].score);
    expect(index.search("kubernetes", 5)).toEqual([]);
    expect(index.search("file", 0)).toEqual([]);
  });

  it("queries do not leak scores into each other", () => {
    const a = index.search("read file", 4);
    index.search("web", 4);
    expect(index.search("read file", 4)).toEqual(a);
  });

  it("breaks ties by document order", () => {
    const same = new Bm25Index([
      [{ text: "alpha", weight: 1 }],
      [{ text: "alpha", weight: 1 }],
      [{ text: "alpha", weight: 1 }],
    ]);
    expect(same.search("alpha", 3).map((h) => h.doc)).toEqual([0, 1, 2]);
  });

  it("handles an empty index", () => {
    expect(new Bm25Index([]).search("x", 3)).toEqual([]);
  });
});
