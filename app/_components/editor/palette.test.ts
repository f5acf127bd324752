import { describe, expect, it } from "vitest";
import { matchCommands, paletteQuery, ranked, recentFirst, type Command } from "./palette";

const cmd = (label: string): Command => ({ id: label, label, run: () => undefined });
const commands = [
  cmd("View: Toggle Terminal"),
  cmd("Terminal: New Terminal"),
  cmd("View: Toggle Preview"),
  cmd("Agent: Choose Model…"),
];

describe("the quick-open box", () => {
  it("reads a file query, a command after > and a line after :", () => {
    expect(paletteQuery("src/a")).toEqual({ mode: "files", text: "src/a" });
    expect(paletteQuery("> toggle term")).toEqual({ mode: "commands", text: "toggle term" });
    expect(paletteQuery(":42")).toEqual({ mode: "line", line: 42 });
    expect(paletteQuery(":")).toEqual({ mode: "line", line: null });
    expect(paletteQuery(":x")).toEqual({ mode: "line", line: null });
  });

  it("ranks files by a subsequence, the file name first", () => {
    expect(ranked(["src/app/x.ts", "lib/apple.ts", "lib/misc.ts"], "ap", (p) => p)).toEqual([
      "lib/apple.ts",
      "src/app/x.ts",
    ]);
    expect(ranked(["b", "a"], "", (p) => p)).toEqual(["b", "a"]);
  });

  it("finds commands by their words in any order", () => {
    expect(matchCommands(commands, "").map((c) => c.label)).toEqual(commands.map((c) => c.label));
    expect(matchCommands(commands, "term new").map((c) => c.label)).toEqual(["Terminal: New Terminal"]);
    expect(matchCommands(commands, "toggle").map((c) => c.label)).toEqual([
      "View: Toggle Terminal",
      "View: Toggle Preview",
    ]);
    expect(matchCommands(commands, "model").map((c) => c.label)).toEqual(["Agent: Choose Model…"]);
    expect(matchCommands(commands, "zzz")).toEqual([]);
  });

  it("lists recently opened files first for an empty query, the open one after the others", () => {
    const paths = ["a.ts", "b.ts", "c.ts", "d.ts"];
    expect(recentFirst(paths, ["c.ts", "gone.ts", "a.ts", "b.ts"], "c.ts")).toEqual(["a.ts", "b.ts", "c.ts", "d.ts"]);
    expect(recentFirst(paths, ["d.ts", "b.ts"], null)).toEqual(["d.ts", "b.ts", "a.ts", "c.ts"]);
    expect(recentFirst(paths, [], "b.ts")).toEqual(["b.ts", "a.ts", "c.ts", "d.ts"]);
  });
});
