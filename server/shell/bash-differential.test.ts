// The analysis against real bash: each line is run by bash with a marker command in some hiding
// place; whenever bash ran the marker, the analysis must list it or call the line opaque.
// Spellings beyond the newline: backquotes the grammar leaves as text, `<<-` bodies it
// does not parse, `x⏎\git push` read as one command, a delimiter joined by a line continuation.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { analyseShell } from "./analyse";

const MARK = "echo QUIVER_MARK >&2";

const CONTEXTS = [
  "echo X",
  'echo "a X b"',
  "echo ${x:-X}",
  'echo "${x:-X}"',
  "echo ${x:=X}",
  "echo ${x-${y-X}}",
  "x=a; echo ${x/a/X}",
  "echo $((1+X))",
  "x=X",
  "x=(X)",
  'export x="X"',
  "x=X true",
  "case X in a) ;; esac",
  "for i in X; do :; done",
  '[[ -n "X" ]]',
  'cat <<< "X"',
  "cat <<EOF\nX\nEOF",
  "cat <<-EOF\n\tX\n\tEOF",
  'cat <<EOF\n"X"\nEOF',
  "cat <<EOF\n${x:-X}\nEOF",
  "cat <<EOF | cat\nX\nEOF",
  "x=$(cat <<EOF\nX\nEOF\n)",
  "f() { X; }; f",
  "(X)",
  "X | cat",
  "cat <(X)",
  "if X; then :; fi",
  "echo $(echo X)",
];
const SUBSTITUTIONS = [`\`${MARK}\``, `$(${MARK})`, `\\\n\`${MARK}\``];

const LINES = [
  ...CONTEXTS.flatMap((c) => SUBSTITUTIONS.map((s) => c.replaceAll("X", s))),
  // A line break then a backslash-escaped program: bash runs two commands.
  `touch x\n\\${MARK}`,
  `touch\n\\${MARK}`,
  `touch x.txt \n\\${MARK}`,
  `(touch x\n\\${MARK})`,
  `if true; then touch x\n\\${MARK}; fi`,
  `touch "x"\n\\${MARK}`,
  // `EO\⏎F` is the delimiter once bash joins the line: what follows runs.
  `cat <<EOF\nx\nEO\\\nF\n${MARK}\nEOF`,
];

function bashRuns(line: string): boolean {
  const r = spawnSync("bash", ["-c", line], { encoding: "utf8", timeout: 5_000, input: "", cwd: "/tmp" });
  return r.stderr.includes("QUIVER_MARK");
}

function analysisSees(line: string): boolean {
  return analyseShell(line).commands.some((c) => c.opaque || (c.argv[0] === "echo" && c.argv.includes("QUIVER_MARK")));
}

describe("what bash runs, the analysis lists or calls opaque", () => {
  it.each(LINES)("%j", (line) => {
    expect(bashRuns(line)).toBe(true);
    expect(analysisSees(line)).toBe(true);
  });

  it("a quoted here-document stays data, a plain one stays readable", () => {
    expect(bashRuns(`cat <<'EOF'\n\`${MARK}\`\nEOF`)).toBe(false);
    expect(analysisSees(`cat <<'EOF'\n\`${MARK}\`\nEOF`)).toBe(false);
    expect(analyseShell("cat <<EOF\nhello $(date)\nEOF").commands.map((c) => [c.argv[0], !!c.opaque])).toEqual([
      ["cat", false],
      ["date", false],
    ]);
    expect(analyseShell("cat <<-EOF\n\thello\n\tEOF").commands.some((c) => c.opaque)).toBe(false);
  });
});
