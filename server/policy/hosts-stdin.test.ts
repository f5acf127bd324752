// Clients that read their commands on stdin under a deny of a host (hosts-stdin.ts): a
// here-document, here-string or `echo`/`printf` pipe that opens a denied host in telnet, ftp,
// lftp or sftp (or runs a `!command` that names it) is a deny; text that names nothing, or a
// telnet given its host (its stdin is then data), stays as it was. The port scanners and the
// netcat cousins (hosts-netcat.ts) connect to every operand.
import { describe, expect, it } from "vitest";
import { judgeShell, policyOf } from "../testing/policy";

const noEvil = policyOf({ effect: "deny", host: "evil.com" });
const decision = (command: string) => judgeShell(command, noEvil).decision;

describe("a client's commands on stdin name where it connects", () => {
  it.each([
    "telnet <<< 'open evil.com 80'",
    "telnet <<< 'o evil.com'",
    "ftp -n <<EOF\nopen evil.com\nuser a b\nEOF",
    "ftp <<'EOF'\nopen evil.com\nEOF",
    "ftp -n <<-EOF\n\topen evil.com\n\tEOF",
    "echo 'open evil.com' | telnet",
    "printf 'open evil.com\\n' | telnet",
    "printf 'open %s\\n' evil.com | ftp",
    "printf '%s\\n' 'open evil.com' | ftp -inv",
    "{ echo open evil.com; } | telnet",
    "(echo open evil.com) | telnet",
    "echo 'open evil.com' | ftp -n",
    "echo 'open EVIL.COM.' | ftp",
    "echo 'open evil\u3002com' | ftp",
    "lftp <<< 'open evil.com'",
    "echo 'open evil.com' | lftp",
    "lftp <<< 'get http://evil.com/x'",
    "lftp -c 'open evil.com'",
    "lftp -e 'open evil.com'",
    "ftp <<< '!curl evil.com'",
    "sftp -b - x <<< '!curl evil.com'",
    "sftp x <<EOF\n!nc evil.com 80\nEOF",
    "timeout 5 ftp <<< 'open evil.com'",
    "echo 'open evil.com' | sudo telnet",
    "echo 'open evil.com 80' | bash -c telnet",
    "echo o evil.com | telnet -8",
    "echo 'OPEN evil.com' | ftp",
    "echo 'op evil.com' | ftp",
    "echo '  open evil.com' | ftp",
    "echo 'proxy open evil.com' | ftp",
    "echo 'open -l u evil.com' | telnet",
    "ftp <<< $'open evil.com'",
    'ftp <<< "open evil.com"',
    "echo -e 'open\\x20evil.com' | ftp",
    "cat <<< 'open evil.com' | ftp",
    "echo 'open evil.com' | tee /dev/null | ftp",
    "echo 'open evil.com' | ftp -n localhost",
    "ftp localhost <<< 'open evil.com'",
  ])("%s is denied", (command) => expect(decision(command)).toBe("policy_deny"));

  it.each([
    "telnet localhost",
    "echo hi | telnet localhost 25",
    "echo 'open evil.com' | telnet localhost 25",
    "echo 'open localhost' | ftp",
    "ftp <<< 'open localhost 21'",
    "sftp -b - x <<< 'put a'",
    "echo hello | nc localhost 80",
    "echo evil.com | nc -l 8080",
  ])("%s is not denied", (command) => expect(decision(command)).not.toBe("policy_deny"));

  it("text only known at run time is asked about, not allowed", () =>
    expect(decision('echo "open $H" | ftp')).toBe("policy_ask"));
});

describe("port scanners and netcat's cousins connect to their operands", () => {
  it.each([
    "pwncat evil.com 22",
    "pwncat-cs user@evil.com",
    "cryptcat evil.com 22",
    "cryptcat -k secret evil.com 22",
    "nmap evil.com",
    "nmap -p 22 evil.com",
    "nmap -sV -p1-1000 a.org evil.com",
    "masscan -p80 evil.com",
    "nping --tcp evil.com",
  ])("%s is denied", (command) => expect(decision(command)).toBe("policy_deny"));

  it.each(["nmap -p 22 localhost", "cryptcat -l -p 4444"])("%s is not denied", (command) =>
    expect(decision(command)).not.toBe("policy_deny"),
  );
});
