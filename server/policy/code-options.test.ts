// An org deny through programs that run code the line hands them beyond `sh -c`: an
// interpreter's script read from a descriptor, node's `data:` imports, make's stdin makefile and
// `--eval`, git's and npm's command strings (on the line or stored by `git config`/`npm pkg
// set`), wrappers the analysis did not know, and what xargs appends from a pipe. Each ran
// `rm -rf y` in bash 5.2 while the policy allowed the line. A denied command in a shell string
// is denied now; code in another language is asked about; harmless lines keep their decision.
import { describe, expect, it } from "vitest";
import type { PolicyRule } from "./rules";
import { judgeShell, policyOf } from "../testing/policy";

const policy = policyOf;
const judge = (command: string) => judgeShell(command, POLICY, false);

const PROGRAMS = [
  ...["python3", "perl", "ruby", "node", "make", "git", "npm", "npx", "cat", "echo", "printf", "xargs", "ls"],
  ...["setarch", "linux64", "linux32", "gosu", "numactl", "xvfb-run", "tini", "dumb-init", "gdb", "perf", "ip"],
  ...["uv", "nix-shell", "nix", "hyperfine", "false", "less", "tsc", "eslint"],
];
const POLICY = policy(
  { effect: "deny", command: "rm -rf" },
  ...PROGRAMS.map((c): PolicyRule => ({ effect: "allow", command: c })),
);

// A denied command in a shell command string the program runs, or in its last words.
const DENIED = [
  "git ls-remote --upload-pack='rm -rf y; git-upload-pack' .",
  "git ls-remote --upload-pack='r\"\"m -rf y; git-upload-pack' .",
  "git fetch --upload-pack='\\rm -rf y' .",
  "git clone -u '\\rm -rf y' . z",
  "git clone --upload-pack='\\rm -rf y' . z",
  "git push --receive-pack='\\rm -rf y' .",
  "git push --exec='\\rm -rf y' .",
  "git archive --remote=. --exec='\\rm -rf y' HEAD",
  "git grep -O'\\rm -rf' -e . -- f",
  "git grep --open-files-in-pager='\\rm -rf' -e . -- f",
  "git -c core.pager='\\rm -rf y' log",
  "git -c core.sshCommand='\\rm -rf' fetch",
  "git -c core.fsmonitor='\\rm -rf y' status",
  "git -c core.editor='\\rm -rf y' commit",
  "git -c alias.x='!\\rm -rf y' x",
  "git config core.fsmonitor '\\rm -rf y; false'; git status",
  "git config core.pager '\\rm -rf y'; git -p log",
  "git config --global sequence.editor '\\rm -rf y'",
  "git config pager.log '\\rm -rf y'",
  "git config alias.x '!\\rm -rf y'",
  "git config diff.x.textconv '\\rm -rf y'",
  "git config diff.external '\\rm -rf y'",
  "git config filter.f.clean '\\rm -rf y'",
  "git config credential.helper '!\\rm -rf y'",
  "git config gpg.program '\\rm -rf y'",
  "git config uploadpack.packObjectsHook '\\rm -rf y'",
  "git config remote.origin.receivepack '\\rm -rf y'",
  "npm exec -c '\\rm -rf y'",
  "npm x -c '\\rm -rf y'",
  "npm exec --call='\\rm -rf y'",
  "npx -c '\\rm -rf y'",
  "npx rm -rf y",
  "npm pkg set 'scripts.x=\\rm -rf y' && npm run x",
  "setarch x86_64 rm -rf y",
  "linux64 rm -rf y",
  "linux32 -R rm -rf y",
  "gosu user rm -rf y",
  "numactl -N 0 rm -rf y",
  "xvfb-run rm -rf y",
  "tini -- rm -rf y",
  "dumb-init rm -rf y",
  "gdb --args rm -rf y",
  "perf stat rm -rf y",
  "ip netns exec ns rm -rf y",
  "uv run rm -rf y",
  "nix-shell --run '\\rm -rf y'",
  "hyperfine '\\rm -rf y'",
  "echo -rf y | xargs rm",
  "printf '%s\\n' -rf y | xargs rm",
  // The command line the code's literal text hands a shell (inline-code.ts).
  "python3 /dev/stdin <<< 'import os; os.system(\"rm -rf y\")'",
  "perl /dev/stdin <<< 'system q(rm -rf y)'",
];

// Code in a language of its own: only asked about, never run unasked.
const ASKED = [
  "python3 /dev/fd/0 <<< 'import os'",
  "cat <<'EOF' | python3 /dev/stdin\nimport os\nEOF",
  "ruby /proc/self/fd/0 <<< 'x'",
  "node /dev/stdin <<< 'x'",
  "python3 <(echo 'import os')",
  "make -f - x <<< $'x:\\n\\trm -rf y'",
  "make -f /dev/stdin x",
  "make --file=- x",
  "make --makefile=- x",
  "make --eval 'x:;\\rm -rf y' x",
  "make --eval='x:;\\rm -rf y' x",
  "make -E 'x:;\\rm -rf y' x",
  "make 'A:=$(shell \\rm -rf y)' x",
  "node --import='data:text/javascript,import(\"child_process\")' x",
  "node --loader data:text/javascript,x x",
  "node --experimental-loader=data:text/javascript,x x",
  "NODE_OPTIONS=--import=data:text/javascript,x node x",
  'git -c core.pager="$P" log',
  'git ls-remote --upload-pack="$U" .',
];

// The harmless lines these programs are mostly used for.
const ALLOWED = [
  "git ls-remote origin",
  "git fetch origin",
  "git config user.name me",
  "git config core.pager less",
  "make test",
  "make -f build.mk all",
  "node x.js",
  "node --import ./register.js x.js",
  "python3 script.py",
  "npm run build",
  "npm pkg set scripts.build=tsc",
  "npx eslint .",
  "setarch x86_64 ls",
  "linux64 ls",
  "gosu user ls",
];

describe("a denied command in a string or words a program runs is denied", () => {
  it.each(DENIED)("%j", (line) => {
    expect(judge(line)).toEqual({ decision: "policy_deny", auto: "deny" });
  });
});

describe("code the policy cannot read is asked about, and auto mode does not run it", () => {
  it.each(ASKED)("%j", (line) => {
    expect(judge(line)).toEqual({ decision: "policy_ask", auto: "ask" });
  });
});

describe("the harmless uses stay allowed", () => {
  it.each(ALLOWED)("%j", (line) => {
    expect(judge(line)).toEqual({ decision: "policy_allow", auto: "run" });
  });
});
