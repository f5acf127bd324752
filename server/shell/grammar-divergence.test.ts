// Where tree-sitter-bash reads a line otherwise than bash 5.2, checked against real bash: a
// here-document delimiter quoted in part (bash's delimiter is the word with its quotes removed,
// so the body ends at an earlier line, and what follows runs), and a line continuation before
// `#` (bash joins the lines first, so `x\⏎#; …` is the word `x#` and what follows runs; the
// grammar reads a comment). Each such line lists what bash runs; what bash reads as data or as a
// comment stays so, and lines the grammar already reads right are read as before.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { analyseShell, isOpaque } from "./analyse";

const MARK = "echo QUIVER_MARK >&2";
const put = (line: string) => line.replaceAll("MARK", MARK);

function bashRuns(line: string): boolean {
  const r = spawnSync("bash", ["-c", line], { encoding: "utf8", timeout: 5_000, input: "", cwd: "/tmp" });
  return r.stderr.includes("QUIVER_MARK");
}

const lists = (line: string) =>
  analyseShell(line).commands.some((c) => c.argv[0] === "echo" && c.argv.includes("QUIVER_MARK"));

// bash ends each body at the line `EOF`, before the grammar's end: MARK runs.
const PARTLY_QUOTED = [
  "cat <<E'O'F\nEOF\nMARK\nE'O'F",
  'cat <<E"OF"\nEOF\nMARK\nE"OF"',
  "cat <<E''OF\nEOF\nMARK\nE''OF",
  "cat <<EOF''\nEOF\nMARK\nEOF''",
  "cat <<$'EOF'\nEOF\nMARK\n$'EOF'",
  'cat <<$"EOF"\nEOF\nMARK\n$"EOF"',
  "cat <<-E'O'F\n\tEOF\nMARK\nE'O'F",
  "cat <<-E'O'F\n\t\tEOF\n\tMARK\n\tE'O'F",
  "cat <<E'O'F > notes.txt\nEOF\nMARK\nE'O'F",
  "cat <<A <<E'O'F\nA\nEOF\nMARK\nE'O'F",
  "sh -c \"cat <<E'O'F\nEOF\nMARK\nE'O'F\"",
  "x=$(cat <<E'O'F\nEOF\nMARK\nE'O'F\n)",
];

// bash removes the backslash-newline first: `#` is inside a word, and MARK runs.
const JOINED = [
  "echo x\\\n#; MARK",
  "echo x\\\n\\\n#; MARK",
  'echo "x"\\\n#; MARK',
  "echo $HOME\\\n#; MARK",
  "echo x\\ \\\n#; MARK",
  "echo x\\\\\\\n#; MARK",
  "echo $(echo a)\\\n#; MARK",
  "true; echo x\\\n#; MARK",
  "x=1\\\n#; MARK",
  "sh -c 'echo x\\\n#; MARK'",
];

describe("a here-document delimiter quoted in part", () => {
  it.each(PARTLY_QUOTED.map(put))("%j lists what bash runs after the body", (line) => {
    expect(bashRuns(line)).toBe(true);
    expect(lists(line)).toBe(true);
    expect(isOpaque(analyseShell(line))).toBe(true);
  });

  it.each(
    [
      // An expansion the grammar reads across bash's delimiter line hides what follows it.
      "cat <<E\\OF\n${x:-'\nEOF\nMARK\n'}\nEOF",
      "cat <<EOF\n${x:-'\nEOF\nMARK\n'}\nEOF",
    ].map(put),
  )("%j is not seen through", (line) => {
    expect(bashRuns(line)).toBe(true);
    expect(isOpaque(analyseShell(line))).toBe(true);
  });

  it.each(
    [
      "cat <<'EOF'\nMARK\nEOF",
      'cat <<"EOF"\nMARK\nEOF',
      "cat <<\\EOF\nMARK\nEOF",
      "cat <<EOF\nhello\nEOF",
      "cat <<-'EOF'\n\tMARK\n\tEOF",
      "cat <<'EOF'\r\nMARK\r\nEOF\r\n",
      // No line `EOF`: bash reads all of it as data, the grammar ends it at the raw `E'O'F`.
      "cat <<E'O'F\nMARK\nE'O'F",
    ].map(put),
  )("%j stays data, read as before", (line) => {
    expect(bashRuns(line)).toBe(false);
    expect(isOpaque(analyseShell(line))).toBe(false);
    expect(lists(line)).toBe(false);
  });

  it("a delimiter the grammar reads as bash does is followed as before", () => {
    const line = put("cat <<E\\OF\nEOF\nMARK\nE\\OF");
    expect(bashRuns(line)).toBe(true);
    expect(lists(line)).toBe(true);
    expect(isOpaque(analyseShell(line))).toBe(false);
  });
});

describe("a line continuation before #", () => {
  it.each(JOINED.map(put))("%j lists what bash runs after the #", (line) => {
    expect(bashRuns(line)).toBe(true);
    expect(lists(line)).toBe(true);
  });

  it.each(
    [
      "echo x \\\n#; MARK",
      "echo x\t\\\n#; MARK",
      "echo x\\\\\n#; MARK",
      "echo x;\\\n#; MARK",
      "echo x|\\\n#; MARK\ncat",
      "echo x\\\r\n#; MARK",
      "echo 'x\\\n#'; true",
      "cat <<'EOF'\nx\\\n#; MARK\nEOF",
      "echo x # c \\",
    ].map(put),
  )("%j is a comment for bash too, read as before", (line) => {
    expect(bashRuns(line)).toBe(false);
    expect(lists(line)).toBe(false);
    expect(isOpaque(analyseShell(line))).toBe(false);
  });

  it("the line's own commands keep their ranges", () => {
    const line = "git status\\\n#; git push";
    const own = analyseShell(line).commands.find((c) => !c.opaque);
    expect(own?.ranges?.map((r) => line.slice(r.start, r.end))).toEqual(["git", "status"]);
    expect(analyseShell(line).commands.some((c) => c.argv.join(" ") === "git push")).toBe(true);
  });
});
