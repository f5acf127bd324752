import { describe, expect, it } from "vitest";
import { terminalLinks } from "./terminal-links";

const files = new Set(["src/app.ts", "tests/test_app.py", "README.md", "a.b/c-d.js"]);
const isFile = (p: string) => files.has(p);
const links = (text: string) =>
  terminalLinks(text, isFile).map((l) => ({ text: text.slice(l.start, l.end), ...l.target }));

describe("links in terminal output", () => {
  it("finds workspace files with their line and column as tools print them", () => {
    expect(links("src/app.ts:12:5 - error TS2322: Type 'string'")).toEqual([
      { text: "src/app.ts:12:5", kind: "file", path: "src/app.ts", line: 12, column: 5 },
    ]);
    expect(links("src/app.ts(3,14): error TS1005")).toEqual([
      { text: "src/app.ts(3,14)", kind: "file", path: "src/app.ts", line: 3, column: 14 },
    ]);
    expect(links("FAILED tests/test_app.py:40: AssertionError")).toEqual([
      { text: "tests/test_app.py:40", kind: "file", path: "tests/test_app.py", line: 40 },
    ]);
    expect(links('  File "/work/ws/tests/test_app.py", line 7, in test_x')).toEqual([
      { text: 'File "/work/ws/tests/test_app.py", line 7', kind: "file", path: "tests/test_app.py", line: 7 },
    ]);
    expect(links("    at main (/home/me/ws/src/app.ts:9:3)")).toEqual([
      { text: "/home/me/ws/src/app.ts:9:3", kind: "file", path: "src/app.ts", line: 9, column: 3 },
    ]);
    expect(links("see ./README.md. and a.b/c-d.js")).toEqual([
      { text: "./README.md", kind: "file", path: "README.md" },
      { text: "a.b/c-d.js", kind: "file", path: "a.b/c-d.js" },
    ]);
  });

  it("leaves words that only look like paths alone", () => {
    expect(links("src/other.ts:1:1 node_modules/x/index.js 1.2.3 v20.1.0 e.g. TypeScript")).toEqual([]);
    expect(links("xsrc/app.ts")).toEqual([]);
  });

  it("finds web addresses; a local one goes to the preview with its port and path", () => {
    expect(links("  ➜  Local:   http://localhost:5173/app?x=1#top")).toEqual([
      {
        text: "http://localhost:5173/app?x=1#top",
        kind: "url",
        url: "http://localhost:5173/app?x=1#top",
        preview: { port: 5173, path: "/app?x=1#top" },
      },
    ]);
    expect(links("Serving HTTP on 0.0.0.0 port 8000 (http://0.0.0.0:8000/) ...")).toEqual([
      { text: "http://0.0.0.0:8000/", kind: "url", url: "http://0.0.0.0:8000/", preview: { port: 8000, path: "/" } },
    ]);
    expect(links("docs at https://example.com/guide.")).toEqual([
      { text: "https://example.com/guide", kind: "url", url: "https://example.com/guide" },
    ]);
  });
});
