// An org deny through lines the grammar reads otherwise than bash (shell/grammar-divergence.test.ts
// checks each against real bash): a here-document delimiter quoted in part, whose body bash ends
// at an earlier line, and a line continuation before `#`, which bash joins into a word. Before,
// the command after them was read as data or as a comment and the line ran unasked; now the org
// deny decides. The same spellings with nothing hidden run as before, or are asked about.
import { describe, expect, it } from "vitest";
import type { LoadedPolicy } from "./decide";
import type { PolicyRule } from "./rules";
import { judgeShell, policyOf } from "../testing/policy";

const policy = policyOf;
const judge = (command: string, p: LoadedPolicy) => judgeShell(command, p);

const allow = (...programs: string[]) => programs.map((c): PolicyRule => ({ effect: "allow", command: c }));
const POLICY = policy({ effect: "deny", command: "rm -rf" }, ...allow("cat", "echo", "ls", "true", "sh"));

// Each line holds `HIDE`, which the table swaps for a denied command or a harmless one.
const HIDDEN = [
  "cat <<E'O'F\nEOF\nHIDE\nE'O'F",
  'cat <<E"OF"\nEOF\nHIDE\nE"OF"',
  "cat <<E''OF\nEOF\nHIDE\nE''OF",
  "cat <<EOF''\nEOF\nHIDE\nEOF''",
  "cat <<$'EOF'\nEOF\nHIDE\n$'EOF'",
  'cat <<$"EOF"\nEOF\nHIDE\n$"EOF"',
  "cat <<-E'O'F\n\tEOF\nHIDE\nE'O'F",
  "sh -c \"cat <<E'O'F\nEOF\nHIDE\nE'O'F\"",
  "echo x\\\n#; HIDE",
  "echo x\\\n\\\n#; HIDE",
  "echo x\\\\\\\n#; HIDE",
  'echo "x"\\\n#; HIDE',
];
const put = (line: string, command: string) => line.replaceAll("HIDE", command);

describe("a command the grammar misreads as data or a comment", () => {
  it.each(HIDDEN.map((l) => put(l, "rm -rf y")))("%j is denied, and auto mode does not run it", (line) => {
    expect(judge(line, POLICY)).toEqual({ decision: "policy_deny", auto: "deny" });
  });

  it.each(HIDDEN.map((l) => put(l, "ls -la")))("%j with a harmless command is asked about, not denied", (line) => {
    expect(judge(line, POLICY)).toEqual({ decision: "policy_ask", auto: "ask" });
  });
});

describe("what bash reads as data or a comment runs as before", () => {
  it.each([
    "cat <<'EOF'\nrm -rf y\nEOF",
    'cat <<"EOF"\nrm -rf y\nEOF',
    "cat <<\\EOF\nrm -rf y\nEOF",
    "cat <<EOF\nrm -rf y\nEOF",
    "cat <<-'EOF'\n\trm -rf y\n\tEOF",
    "echo x \\\n#; rm -rf y",
    "echo x\\\\\n#; rm -rf y",
    "echo x;\\\n#; rm -rf y",
    "echo 'x\\\n#'; true",
    "cat <<'EOF'\nx\\\n#; rm -rf y\nEOF",
  ])("%j is allowed and runs", (line) => {
    expect(judge(line, POLICY)).toEqual({ decision: "policy_allow", auto: "run" });
  });
});
