// What the line itself hands a later command of it (server/shell/line-feeds.ts, walker.ts): a
// file it wrote (`ftp < s`, `BASH_ENV=s`), a process substitution on stdin, a variable's value
// in printed text, a function's output as the program, a coprocess's command, a prompt command.
// Each is read as a reading: a deny it visibly shows holds, and no allow rule covers it.
import { describe, expect, it } from "vitest";
import { judgeShell, policyOf } from "../testing/policy";

const noRm = policyOf({ effect: "deny", command: "rm" });
const noEvil = policyOf({ effect: "deny", host: "evil.com" });
const decision = (command: string, policy = noRm) => judgeShell(command, policy).decision;

describe("a denied command the line runs by a way of its own", () => {
  it.each([
    "PROMPT_COMMAND='rm -rf /' bash -i",
    "export PROMPT_COMMAND='rm -rf /'; bash -i",
    "PS1='$(rm -rf /)' bash -i",
    "PS0='`rm -rf /`' bash -i",
    "echo 'rm -rf /' > e; BASH_ENV=e bash -c true",
    "printf 'rm -rf /\\n' > e; export BASH_ENV=e; bash -c true",
    "cat > e <<'X'\nrm -rf /\nX\nBASH_ENV=e bash -c true",
    "echo 'rm -rf /' > e; ENV=e sh -c true",
    "echo 'rm -rf /' > ./e; BASH_ENV=\"e\" bash -c true",
    "coproc rm -rf /",
    "coproc NAME { rm -rf /; }",
    "coproc { rm -rf /; }",
    "coproc NAME ( rm -rf / )",
    "coproc N { ls; rm -rf /; }",
    "coproc bash -c 'rm -rf /'",
    "f(){ echo rm; }; $(f) -rf /",
    "function f { echo rm; }; $(f) -rf /",
    "f(){ printf rm; }; `f` -rf /",
    'f(){ echo rm; }\n"$(f)" -rf /',
  ])("%s is denied", (command) => expect(decision(command)).toBe("policy_deny"));

  it.each([
    "coproc ls",
    "f(){ echo ls; }; $(f) -la",
    "echo 'ls' > e; BASH_ENV=e bash -c true",
    "PROMPT_COMMAND='date' bash -i",
    "PS1='\\u@\\h$ ' bash -i",
  ])("%s is not denied", (command) => expect(decision(command)).not.toBe("policy_deny"));
});

describe("a client's commands on stdin from what the line made", () => {
  it.each([
    'H=evil.com; echo "open $H" | ftp',
    "H=evil.com; printf 'open %s\\n' \"$H\" | ftp",
    'H=ok.com; H=evil.com; echo "open ${H}" | telnet',
    "telnet < <(echo open evil.com 80)",
    "ftp -n < <(printf 'open evil.com\\n')",
    "ftp < <(H=evil.com; echo open $H)",
    "echo 'open evil.com' > s; ftp < s",
    "echo 'user a' > s; echo 'open evil.com' >> s; ftp -n < s",
    "cat > s <<EOF\nopen evil.com\nEOF\nftp < s",
    "f(){ echo open evil.com; }; f | ftp",
  ])("%s is denied", (command) => expect(decision(command, noEvil)).toBe("policy_deny"));

  it.each([
    'echo "open localhost" | ftp',
    'H=localhost; echo "open $H" | ftp',
    "echo 'open localhost' > s; ftp < s",
    "ftp < <(echo open localhost)",
    "echo 'open evil.com' > s; ftp < t",
    "echo 'open evil.com' > s; cat x > s; ftp < s",
  ])("%s is not denied", (command) => expect(decision(command, noEvil)).not.toBe("policy_deny"));

  it("a reading never satisfies an allow rule", () => {
    const allow = policyOf(
      { effect: "allow", command: "ftp" },
      { effect: "allow", command: "echo" },
      { effect: "allow", command: "bash" },
      { effect: "allow", command: "ls" },
      { effect: "deny", host: "evil.com" },
    );
    for (const command of [
      "echo 'open evil.com' > s; ftp < s",
      'H=evil.com; echo "open $H" | ftp',
      "ftp < <(echo open evil.com)",
      "echo ls > e; BASH_ENV=e bash -c ls",
      "coproc ls",
    ])
      expect(decision(command, allow)).not.toBe("policy_allow");
  });
});
