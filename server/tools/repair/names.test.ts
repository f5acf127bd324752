import { describe, expect, it } from "vitest";
import { NameIndex, didYouMean, editDistance, type NameRung } from "./names";

const tools = [
  "read_file",
  "write_file",
  "list_files",
  "search_text",
  "shell",
  "fetch_url",
  "git_diff",
  "GetWeather",
  "apply_patch",
];
const index = new NameIndex(tools);

describe("name ladder", () => {
  it.each<[string, string, NameRung]>([
    ["read_file", "read_file", "exact"],
    ["READ_FILE", "read_file", "lowercase"],
    ["Shell", "shell", "lowercase"],
    ["getweather", "GetWeather", "lowercase"],
    ["read-file", "read_file", "hyphen_to_underscore"],
    ["Fetch-URL", "fetch_url", "hyphen_to_underscore"],
    ["readFile", "read_file", "snake_case"],
    ["SearchText", "search_text", "snake_case"],
    ["get_weather", "GetWeather", "snake_case"],
    ["read_file_tool", "read_file", "strip_tool_suffix"],
    ["shellTool", "shell", "strip_tool_suffix"],
    ["apply", "apply_patch", "unique_prefix"],
    ["git", "git_diff", "unique_prefix"],
    ["fetch", "fetch_url", "unique_prefix"],
  ])("%s → %s (%s)", (input, name, rung) => {
    expect(index.resolve(input)).toEqual({ ok: true, name, rung });
  });

  it("a prefix resolves only when it is unique", () => {
    const two = new NameIndex(["read_file", "read_dir"]);
    expect(two.resolve("read")).toMatchObject({ ok: false });
    expect(two.resolve("read_f")).toEqual({ ok: true, name: "read_file", rung: "unique_prefix" });
  });

  it("never picks between two tools that normalise alike", () => {
    const clash = new NameIndex(["read_file", "Read_File"]);
    expect(clash.resolve("READ_FILE")).toEqual({ ok: false, candidates: ["Read_File", "read_file"] });
    expect(clash.resolve("Read_File")).toEqual({ ok: true, name: "Read_File", rung: "exact" });
  });

  it("prefixes shorter than three characters do not match", () => {
    expect(index.resolve("sh")).toMatchObject({ ok: false });
  });

  it.each<[string, string[]]>([
    ["reed_file", ["read_file"]],
    ["serch_txt", ["search_text"]],
    ["shall", ["shell"]],
    ["lst_files", ["list_files"]],
    ["rite_fil", ["write_file"]],
    ["completely_unknown", []],
  ])("did you mean for %s", (input, candidates) => {
    const r = index.resolve(input);
    expect(r).toEqual({ ok: false, candidates });
  });

  it("orders candidates by distance then name", () => {
    const idx = new NameIndex(["read_file", "reap_file", "read_files"]);
    expect(idx.suggest("read_fil")).toEqual(["read_file", "read_files", "reap_file"]);
  });

  it.each([
    ["x", ["x"], 'Unknown tool "x". Did you mean: x?'],
    ["y", [], 'Unknown tool "y".'],
  ])("message for %s", (name, candidates, message) => {
    expect(didYouMean(name, candidates)).toBe(message);
  });
});

describe("editDistance", () => {
  it.each([
    ["", "", 0],
    ["abc", "abc", 0],
    ["kitten", "sitting", 3],
    ["flaw", "lawn", 2],
    ["read_file", "reed_fil", 2],
    ["a", "abcdef", 5],
  ])("%s ↔ %s = %i", (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
  });

  it("gives up past the cap", () => {
    expect(editDistance("abcdefgh", "zyxwvuts", 3)).toBe(4);
    expect(editDistance("a", "abcdef", 3)).toBe(4);
  });
});
