// Which word a wrapper runs as its program, read as the wrapper reads its options: a red-team
// found option values and `sh -c` scripts taken from the wrong word. Where bash may move the
// program (a value or operand only known at run time, an option the analysis does not know),
// the wrapper must be opaque, never a guess.
import { describe, expect, it } from "vitest";
import { analyseShell } from "./analyse";

const commands = (line: string) => analyseShell(line).commands;
const seesPush = (line: string) => commands(line).some((c) => c.argv[0] === "git" && c.argv[1] === "push" && !c.opaque);
const opaqueReason = (line: string) => commands(line).find((c) => c.opaque)?.opaque;

describe("a wrapper's options are read as the wrapper reads them", () => {
  it.each([
    "timeout -- 5 git push",
    "timeout -s KILL -- 5 git push",
    "timeout --sig KILL 5 git push",
    "timeout --signal=KILL 5 git push",
    "timeout -k1 -sKILL 5 git push",
    "sudo --user root git push",
    "sudo --us root git push",
    "sudo --user=root git push",
    "sudo -u root -- git push",
    "sudo -nu root git push",
    "sudo A-B=1 git push",
    "sudo FOO=1 git push",
    "env - git push",
    "env -i - X=1 git push",
    "env a-b=c git push",
    "env --unset X git push",
    "env -iu X git push",
    "nice --adj 5 git push",
    "nice --5 git push",
    "nice -n5 git push",
    'nice -n "$N" git push',
    'sudo -u "$USER" git push',
    "stdbuf --output L git push",
    "exec -cl -a name git push",
    "echo x | xargs -i{} git push",
    "echo x | xargs -e git push",
    "echo x | xargs -eEOF git push",
    "echo x | xargs -l git push",
    "echo x | xargs --replace git push",
    "echo x | xargs --max-args 1 git push",
    "chroot --userspec u:g / git push",
    "chrt -o 0 git push",
    "taskset -c 1 git push",
    "ionice -c3 git push",
    "setsid -w git push",
    "busybox env git push",
    "toybox env git push",
    "watch -d 'git push'",
    "watch -n 1 -d git push",
    "watch --differences git push",
    "watch -x git push",
  ])("%j runs git push", (line) => {
    expect(seesPush(line)).toBe(true);
  });

  it.each([
    // An unset `$E` vanishes: the program is a word later than the option table says.
    "nice -n $E 5 git push",
    "nice -n $E 5 $'\\x67it' push origin main",
    "env -u $E X $'\\x67it' push",
    "timeout -s $E KILL 5 $'\\x67it' push",
    "stdbuf -o $E L $'\\x67it' push",
    "exec -a $E x $'\\x67it' push",
    "echo x | xargs -n $E 1 $'\\x67it' push",
    "G=git; nice -n $E 5 $G push",
    "timeout $T git push",
    "timeout -- $T 5 git push",
    "sudo -u ${U[@]} git push",
    'sudo -u "$@" git push',
    // GNU xargs' -i, -e and -l take a value only glued on: the next word is the program.
    "echo x | xargs -i $P push",
    "echo x | xargs -e $P push",
    "echo x | xargs -l $P push",
    "echo x | xargs --replace $P push",
    // an option the analysis does not know may take the next word
    "sudo --frobnicate root git push",
    "timeout --bogus 5 git push",
    "env --i git push",
    "nice -q 5 git push",
    // the replacement string decides the program
    "echo git | xargs -I P P push",
    'echo git | xargs -I "$R" git push',
    "chrt -o git push",
    "chroot /",
    "busybox $A git push",
    "watch -n $E 5 'git push'",
    "watch --frob 'git push'",
  ])("%j is opaque", (line) => {
    expect(opaqueReason(line)).toBeDefined();
  });

  it("says why on the card", () => {
    expect(opaqueReason("nice -n $E 5 git push")).toBe("`nice` with the value of `-n` only known at run time");
    expect(opaqueReason("sudo --frobnicate root git push")).toMatch(/does not know \(`--frobnicate`\)/);
    expect(opaqueReason("sudo -Es git push")).toBe("`sudo` starting a shell");
  });

  it("xargs' replacement string makes the words holding it unknown", () => {
    const x = commands("echo push | xargs -I{} git {}").find((c) => c.wrappedBy === "xargs")!;
    expect(x.words.map((w) => w.dynamic)).toEqual([false, true]);
  });

  it("a wrapper that runs nothing is itself the command", () => {
    expect(commands("env").map((c) => c.argv)).toEqual([["env"]]);
    expect(commands("command -v git").map((c) => c.argv)).toEqual([["command", "-v", "git"]]);
    expect(commands("timeout 5").map((c) => c.argv)).toEqual([["timeout", "5"]]);
  });
});

describe("a shell's -c script is the first word after its options, as bash reads them", () => {
  it.each([
    "bash -c -e 'git push origin main'",
    "sh -c -x 'git push'",
    "bash -c -- 'git push'",
    "bash -c - 'git push'",
    "bash -c -o errexit 'git push'",
    "bash -c -O extglob 'git push'",
    "bash -c +e 'git push'",
    "bash -c + 'git push'",
    "bash +c 'git push'",
    "bash -eo pipefail -c 'git push'",
    "bash -ec 'git push'",
    "bash -ce 'git push'",
    "bash --norc --noprofile -c 'git push'",
    "bash -rcfile x -c 'git push'",
    "bash --init-file x -c 'git push'",
    "bash -login -c 'git push'",
    "bash -c 'git push' -e",
    "dash -c -e 'git push'",
    "fish -c 'git push'",
    "fish -c 'echo' -C 'git push'",
    "fish --command='git push'",
    "fish -c'git push'",
    "busybox sh -c 'git push'",
    "bash -c -e $'\\x67it push origin main'",
    "sh -c -x $'\\x67it push'",
    "bash -c -- $'\\x67it push'",
    "fish -c $'\\x67it push'",
  ])("%j runs git push", (line) => {
    expect(seesPush(line)).toBe(true);
  });

  it.each([
    "bash -c -o $E 'git push'",
    "bash -c $E 'git push'",
    "bash --rcfile $E -c 'git push'",
    "bash -c -oerrexit 'git push'",
    "bash -c -Z 'git push'",
    "bash --frobnicate -c 'git push'",
    "bash -c",
    "fish -C 'git push' script.fish",
    // past ASCII, bash's bytes depend on the locale; NUL ends bash's word
    "bash -c $'\\xc3\\xa9; git push'",
    "bash -c $'git\\u00e9 push'",
    "bash -c $'\\0git push'",
  ])("%j is opaque", (line) => {
    expect(opaqueReason(line)).toBeDefined();
  });
});
