// Writes against real bash: each line is run by bash in an empty folder; whenever bash created
// `out`, the analysis must note a write (or call the line opaque), or a read-only line could
// write without a card. The grammar hangs some redirects where a walk over statements does not
// look: after a here-document's delimiter, on a function definition, inside `$(…)`.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { analyseShell, isOpaque } from "./analyse";
import { isReadOnlyCommand } from "../tools/builtin/shell-safety";

const LINES = [
  "true >out",
  "true 2>out",
  "true &>out",
  "true >|out",
  "true >&out",
  "true {fd}>out",
  "true <>out",
  "true >\\\nout",
  "cat <<E >out\nx\nE",
  "cat <<'E' >out\nx\nE",
  "cat <<E 1>out\nx\nE",
  "cat <<E &>out\nx\nE",
  "cat <<-E >out\n\tx\n\tE",
  "cat <<E | cat >out\nx\nE",
  "cat <<< x >out",
  "f() { true; } >out; f",
  "f() ( true ) >out; f",
  "function f { true; } 2>out; f",
  "{ true; } >out",
  "(true) >out",
  "if true; then true; fi >out",
  "for i in 1; do :; done >out",
  "case x in x) ;; esac >out",
  "[[ 1 ]] >out",
  "echo $(>out)",
  "echo $(true >out)",
  "echo <(true >out)",
  "x=1 >out",
  ">out",
  "true 2>&1 >out",
  "echo a>out",
];

function bashWrites(line: string): boolean {
  const dir = mkdtempSync(join(tmpdir(), "quiver-writes-"));
  try {
    spawnSync("bash", ["-c", line], { cwd: dir, input: "", timeout: 5_000 });
    return existsSync(join(dir, "out"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("what bash writes, the analysis notes", () => {
  it.each(LINES)("%j", (line) => {
    expect(bashWrites(line)).toBe(true);
    const a = analyseShell(line);
    expect(a.writes || isOpaque(a)).toBe(true);
  });
});

// Commands the grammar keeps as text (a `${v#pattern}` operand) or that arithmetic runs from a
// variable's run-time value (a substring's offset, `test -v 'a[x]'`): bash runs them, so the
// line is never read-only. Each would `touch out`.
const HIDDEN = [
  "[[ ${PWD#$(touch out)} ]]",
  "[[ -n ${PWD%%$((1))$(touch out)} ]]",
  'cat <<< "${PWD##$(touch out)}"',
  "case ${PWD#$(touch out)} in *) ls;; esac",
  "[[ ${PWD,,<(touch out)} ]]",
  "[[ -n ${PWD:$(printf 'a\\133\\044(touch out)]')} ]]",
  "[[ -n ${x=$(printf 'a\\133\\044(touch out)]')} && -n ${PWD:x} ]]",
  "for x in \"$(printf 'a\\133\\044(touch out)]')\"; do case ${PWD:x:1} in *) ;; esac; done",
  "for x in \"$(printf 'a\\133\\044(touch out)]')\"; do test -v 'PWD[x]'; done",
  // bash joins a line continuation before it reads `$(`, `<(`, `$[` or an operator
  "[[ ${PWD#$\\\n(touch out)} ]]",
  "[[ a =~ ^$\\\n\\\n(touch out)$ ]]",
  "[[ -n ${PWD/a/<\\\n(touch out)} ]]",
  "for x in '$(touch out)'; do [[ -n ${x@\\\nP} ]]; done",
  // an expansion nested in a pattern, which the grammar keeps as text
  "for x in '$(touch out)'; do [[ ${PWD#${x@P}} ]]; done",
  "for x in '$(touch out)'; do [[ a =~ x${x@P} ]]; done",
  "for x in '$(touch out)'; do cat <<E\n${PWD%${x@P}}\nE\ndone",
  "for x in \"$(printf 'a\\133\\044(touch out)]')\"; do [[ ${PWD#${PWD:x}} ]]; done",
];

describe("what bash runs hidden in expansions, the classifier never calls read-only", () => {
  it.each(HIDDEN)("%j", (line) => {
    expect(bashWrites(line)).toBe(true);
    expect(isReadOnlyCommand(line)).toBe(false);
  });
});
