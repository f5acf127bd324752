// A denied command reached through a program word only known at run time whose value the line
// shows (server/shell/program-values.ts: `$(echo rm)`, `$r` after `r=rm`, `source <(echo …)`)
// or an alias's value (wrappers.ts): each reading is listed opaque, so a deny or ask rule holds
// and an allow rule never does.
import { describe, expect, it } from "vitest";
import { judgeShell, policyOf } from "../testing/policy";

const noRm = policyOf({ effect: "deny", command: "rm -rf" });
const decision = (command: string, policy = noRm) => judgeShell(command, policy).decision;

describe("a denied command behind a run-time program word", () => {
  it.each([
    "$(echo rm) -rf /",
    "`echo rm` -rf /",
    "$(printf rm) -rf /",
    "$(echo rm -rf) /",
    "$(echo /bin/rm) -rf /",
    "r=rm; $r -rf /",
    "r=rm; ${r} -rf /",
    'r=rm; "$r" -rf /',
    "r='rm -rf'; $r /",
    "export r=rm; $r -rf /",
    "f(){ :; }; $(echo rm) -rf /",
    "source <(echo rm -rf /)",
    ". <(echo 'rm -rf /')",
    "bash <(printf 'rm -rf /')",
    "alias r='rm -rf'; r /",
    "shopt -s expand_aliases; alias r='rm -rf'\nr /",
    "alias a=ls r='rm --recursive --force'",
    'f(){ rm -rf "$@"; }; f /',
    "echo / | xargs rm -rf",
    "find / -exec rm -rf {} +",
    "env -S 'rm -rf /'",
    "timeout 5 rm -rf /",
    "bash <<< 'rm -rf /'",
    "eval 'rm -rf /'",
    "command rm -rf /",
    "exec rm -rf /",
    "{ rm -rf /; }",
    "(rm -rf /)",
    '"$(echo rm)" -rf /',
    "$(cat <<< rm) -rf /",
    "${r:-rm} -rf /",
    "${r=rm} -rf /",
    "$(echo r)m -rf /",
    "r=rm; s=$r; $s -rf /",
    "declare r=rm; $r -rf /",
    "source /dev/stdin <<< 'rm -rf /'",
    "source <(cat <<< 'rm -rf /')",
    "trap 'rm -rf /' EXIT",
    "trap -- 'rm -rf /' EXIT",
    'alias r="rm -rf"; r /',
    "alias -- r='rm -rf'",
    "builtin alias r='rm -rf'",
    "command alias r='rm -rf'",
  ])("%s is denied", (command) => expect(decision(command)).toBe("policy_deny"));

  it.each([
    "$(echo ls) -la",
    "r=ls; $r -rf",
    "alias r='ls -la'; r",
    "source <(echo ls)",
    'r="rm -rf"; echo "$r"',
    "trap 'rm -r /tmp/x' EXIT INT",
    "trap - EXIT",
  ])("%s is not denied", (command) => expect(decision(command)).not.toBe("policy_deny"));

  it("a reading never satisfies an allow rule", () => {
    const allowLs = policyOf({ effect: "allow", command: "ls" });
    for (const command of ["$(echo ls)", "r=ls; $r", "source <(echo ls)"])
      expect(decision(command, allowLs)).not.toBe("policy_allow");
  });
});
