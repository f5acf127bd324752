// Code a program runs that the line hands it in ways beyond `-c`: a script read from a
// descriptor, node's `data:` imports, make's stdin makefile and `--eval`, git's and npm's
// command strings, wrappers the analysis did not know, and what xargs appends from a pipe. Each
// ran `rm -rf y` in bash 5.2 while the analysis saw nothing it could run.
import { describe, expect, it } from "vitest";
import { analyseShell } from "./analyse";

const commands = (line: string) => analyseShell(line).commands;
// The commands the line runs, as the analysis lists them, and whether it flags the unseen.
const runsRm = (line: string) => commands(line).some((c) => c.argv[0] === "rm" && c.argv.includes("-rf"));
const unseen = (line: string) => commands(line).some((c) => c.opaque !== undefined || c.runsCode !== undefined);

describe("a program an interpreter reads from a descriptor is not a file the policy can read", () => {
  it.each([
    "python3 /dev/stdin <<< 'import os'",
    "python3 /dev/fd/0 <<< 'import os'",
    "python3 /proc/self/fd/0 <<< 'import os'",
    "cat <<'EOF' | python3 /dev/stdin\nimport os\nEOF",
    "perl /dev/stdin <<< 'system 1'",
    "ruby /dev/fd/0 <<< 'x'",
    "node /dev/stdin <<< 'x'",
    "python3 /dev/fd/3 3<<< 'x'",
    "python3 -u //dev/./stdin <<< 'x'",
    "python3 <(echo 'import os')",
    "perl <(curl -s https://ok.com/x)",
  ])("%j is unseen", (line) => {
    expect(unseen(line)).toBe(true);
  });

  it.each(["python3 script.py", "node x.js", "python3 compare.py /dev/stdin", "perl -w x.pl"])(
    "%j is a plain program",
    (line) => expect(unseen(line)).toBe(false),
  );
});

describe("node loading code from a data: URL runs that code", () => {
  it.each([
    "node --import='data:text/javascript,x' x.js",
    "node --import data:text/javascript,x x.js",
    "node --loader data:text/javascript,x x.js",
    "node --experimental-loader=data:text/javascript,x x.js",
    "node -r data:text/javascript,x x.js",
    "NODE_OPTIONS=--import=data:text/javascript,x node x.js",
    "env NODE_OPTIONS=--import=data:x node x.js",
  ])("%j is unseen", (line) => expect(unseen(line)).toBe(true));

  it("a file import is not", () => expect(unseen("node --import ./register.js x.js")).toBe(false));
});

describe("make running recipes the line writes", () => {
  it.each([
    "make -f - x <<< $'x:\\n\\trm -rf y'",
    "make -f /dev/stdin x",
    "make -sf- x",
    "make --file=- x",
    "make --makefile - x",
    "make --file /dev/fd/0 x",
    "make -f <(echo x) x",
    "make --eval 'x:;rm -rf y' x",
    "make --eval='x:;rm -rf y' x",
    "make --ev='x:;rm -rf y' x",
    "make -E 'x:;rm -rf y' x",
    "make -E'x:;rm -rf y' x",
    "make 'A!=rm -rf y' x",
    "make 'A:=$(shell rm -rf y)' x",
    "make SHELL=/tmp/sh x",
    "MAKEFLAGS='--eval=x:;rm -rf y' make x",
  ])("%j runs code", (line) => expect(unseen(line)).toBe(true));

  it.each([
    "make test",
    "make -j4 all",
    "make -f build.mk all",
    "make -C sub install",
    "make CFLAGS=-O2 all",
    "make -j$(getconf _NPROCESSORS_ONLN) all",
  ])("%j is a plain make", (line) => expect(unseen(line)).toBe(false));
});

describe("git's command strings are analysed as scripts", () => {
  it.each([
    "git ls-remote --upload-pack='r\"\"m -rf y; git-upload-pack' .",
    "git ls-remote --upload-pack '\\rm -rf y' .",
    "git fetch --upload-pack='\\rm -rf y' .",
    "git pull --upload-pack='\\rm -rf y' .",
    "git clone -u '\\rm -rf y' . z",
    "git clone -u'\\rm -rf y' . z",
    "git clone --upload-pack='\\rm -rf y' . z",
    "git push --receive-pack='\\rm -rf y' .",
    "git push --exec='\\rm -rf y' .",
    "git archive --remote=. --exec='\\rm -rf y' HEAD",
    "git grep -O'\\rm -rf' -e . -- f",
    "git grep --open-files-in-pager='\\rm -rf' -e x",
    "git -c core.pager='\\rm -rf y' log",
    "git -c core.sshCommand='\\rm -rf' fetch",
    "git -c CORE.FSMONITOR='\\rm -rf y' status",
    "git -c alias.x='!\\rm -rf y' x",
    "git -C sub -c core.editor='\\rm -rf y' commit",
    "git config core.fsmonitor '\\rm -rf y; false'; git status",
    "git config --global core.pager '\\rm -rf y'",
    "git config set alias.x '!\\rm -rf y'",
    "git config --local diff.x.textconv '\\rm -rf y'",
    "git config filter.f.smudge '\\rm -rf y'",
    "git config credential.helper '!\\rm -rf y'",
    "git config remote.origin.uploadpack '\\rm -rf y'",
    "git rebase -x '\\rm -rf y' HEAD~1",
  ])("%j runs rm -rf", (line) => expect(runsRm(line)).toBe(true));

  it.each(['git -c core.pager="$P" log', 'git ls-remote --upload-pack="$U" .', 'git config core.editor "$E"'])(
    "%j is opaque",
    (line) => expect(commands(line).some((c) => c.opaque)).toBe(true),
  );

  it.each(["git ls-remote origin", "git fetch origin", "git config user.name me", "git grep -O -e x"])(
    "%j runs nothing else",
    (line) => expect(commands(line).map((c) => c.argv[0])).toEqual(["git"]),
  );
});

describe("npm's command strings and stored scripts", () => {
  it.each([
    "npm exec -c '\\rm -rf y'",
    "npm x -c '\\rm -rf y'",
    "npm exec --call='\\rm -rf y'",
    "npx -c '\\rm -rf y'",
    "npx --call '\\rm -rf y'",
    "npx rm -rf y",
    "npx --yes -- rm -rf y",
    "npm exec -- rm -rf y",
    "npm pkg set 'scripts.x=\\rm -rf y' && npm run x",
    'npm pkg set --json \'scripts={"x":"\\\\rm -rf y"}\'',
    "npm set-script x '\\rm -rf y'",
  ])("%j runs rm -rf", (line) => expect(runsRm(line)).toBe(true));

  it("node options npm sets are code", () => expect(unseen("npm run x --node-options=--import=data:x")).toBe(true));
  it.each(["npm run build", "npm install", "npm i x", "npm pkg set name=x"])("%j runs nothing else", (line) =>
    expect(commands(line).map((c) => c.argv[0])).toEqual(["npm"]),
  );
});

describe("wrappers that run their last words", () => {
  it.each([
    "setarch x86_64 rm -rf y",
    "setarch x86_64 -R rm -rf y",
    "linux64 rm -rf y",
    "linux32 --addr-no-randomize rm -rf y",
    "gosu user rm -rf y",
    "su-exec user rm -rf y",
    "numactl -N 0 rm -rf y",
    "xvfb-run -a rm -rf y",
    "tini -- rm -rf y",
    "dumb-init rm -rf y",
    "gdb --args rm -rf y",
    "perf stat rm -rf y",
    "ip netns exec ns rm -rf y",
    "uv run rm -rf y",
    "uv tool run rm -rf y",
    "ip -all netns exec rm -rf y",
    "nix-shell -p x --run '\\rm -rf y'",
    "nix develop -c rm -rf y",
    "hyperfine '\\rm -rf y'",
    "hyperfine --prepare='\\rm -rf y' 'ls'",
  ])("%j runs rm -rf", (line) => expect(runsRm(line)).toBe(true));

  it("a known wrapper's command is seen for certain", () => {
    expect(commands("setarch x86_64 ls").map((c) => [c.argv[0], !!c.opaque])).toEqual([
      ["setarch", false],
      ["ls", false],
    ]);
    expect(commands("ip addr").map((c) => c.argv[0])).toEqual(["ip"]);
  });
});

describe("xargs appends what the line pipes to it", () => {
  it.each([
    "echo -rf y | xargs rm",
    "printf '%s\\n' -rf y | xargs rm",
    "echo \"-rf 'a b'\" | xargs rm",
    "printf '%s\\n' -rf y | xargs -d '\\n' rm",
    "echo -rf y | xargs -n1 rm",
  ])("%j runs rm -rf", (line) => expect(runsRm(line)).toBe(true));

  it("an unknown word stays after them", () => {
    const x = commands("echo a b | xargs ls").find((c) => c.wrappedBy === "xargs")!;
    expect(x.words.map((w) => [w.text, w.dynamic])).toEqual([
      ["ls", false],
      ["a", false],
      ["b", false],
      ["<input of xargs>", true],
    ]);
  });
});
