// A denied command nested in a string a network client runs locally (shell/client-code.ts):
// ssh's ProxyCommand, LocalCommand and KnownHostsCommand, rsync's `-e`, netcat's `-e`/`-c`,
// socat's EXEC/SYSTEM, and the variables git and rsync run (`GIT_SSH_COMMAND`, `RSYNC_RSH`,
// `GIT_SSH`, ...) are commands in their own right: a deny of them is a deny, not a question.
import { describe, expect, it } from "vitest";
import { judgeShell, policyOf } from "../testing/policy";

const noRm = policyOf({ effect: "deny", command: "rm -rf /" }, { effect: "allow", tool: "shell" });
const noCurl = policyOf({ effect: "deny", command: "curl" }, { effect: "allow", tool: "shell" });
const decision = (command: string, policy = noRm) => judgeShell(command, policy).decision;

describe("a denied command in a client's command string is denied", () => {
  it.each([
    "ssh -o ProxyCommand='rm -rf /' a.org",
    "ssh -oProxyCommand='rm -rf /' a.org",
    "ssh -o'ProxyCommand rm -rf /' a.org",
    "ssh -4o 'proxycommand=rm -rf /' a.org",
    "ssh -o 'PROXYCOMMAND   rm -rf /' a.org",
    "ssh -o ProxyCommand=$'rm -rf /' a.org",
    'ssh -o "ProxyCommand=exec rm -rf /" a.org',
    "ssh a.org -o 'ProxyCommand rm -rf /'",
    "ssh -o 'LocalCommand rm -rf /' -o PermitLocalCommand=yes a.org",
    "ssh -o 'KnownHostsCommand rm -rf /' a.org",
    "ssh -o ProxyCommand='sh -c \"rm -rf /\"' a.org",
    "timeout 5 ssh -o ProxyCommand='rm -rf /' a.org",
    "scp -o 'ProxyCommand rm -rf /' f a.org:x",
    "sftp -o 'ProxyCommand rm -rf /' a.org",
    "rsync -e 'rm -rf /' f a.org:x",
    "rsync -avze 'rm -rf /' f a.org:x",
    "rsync -e'rm -rf /' f a.org:x",
    "rsync --rsh='rm -rf /' f a.org:x",
    "rsync --rsh 'rm -rf /' f a.org:x",
    "RSYNC_RSH='rm -rf /' rsync f a.org:x",
    "export RSYNC_RSH='rm -rf /'; rsync f a.org:x",
    "env RSYNC_RSH='rm -rf /' rsync f a.org:x",
    "GIT_SSH_COMMAND='rm -rf /' git fetch",
    "GIT_SSH_COMMAND=$'rm -rf /' git fetch",
    "export GIT_SSH_COMMAND='rm -rf /'; git fetch",
    "export GIT_SSH_COMMAND='rm -rf /'\ngit fetch",
    "GIT_SSH_COMMAND='rm -rf /'; git fetch",
    "declare -x GIT_SSH_COMMAND='rm -rf /'; git fetch",
    "env GIT_SSH_COMMAND='rm -rf /' git fetch",
    "GIT_PROXY_COMMAND='rm -rf /' git fetch git://a.org/r",
    "GIT_EXTERNAL_DIFF='rm -rf /' git diff",
    "GIT_EDITOR='rm -rf /' git commit",
    "GIT_PAGER='rm -rf /' git log",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.sshCommand GIT_CONFIG_VALUE_0='rm -rf /' git fetch",
    "nc -l -p 8080 -e 'rm -rf /'",
    "ncat -l 8080 --sh-exec 'rm -rf /'",
    "socat TCP-LISTEN:8080 SYSTEM:'rm -rf /'",
    "socat - 'EXEC:rm -rf /'",
  ])("%s", (command) => expect(decision(command)).toBe("policy_deny"));

  it.each([
    "ssh -o ProxyCommand='curl x' a.org",
    "ssh -o ProxyCommand='CURL x' a.org",
    "scp -S curl f a.org:x",
    "rsync -e 'curl x' f a.org:x",
    "GIT_SSH=curl git fetch",
    "GIT_SSH=/usr/bin/curl git fetch",
    "GIT_SSH_COMMAND='curl x' git fetch",
  ])("%s, under a deny of curl", (command) => expect(decision(command, noCurl)).toBe("policy_deny"));
});

describe("controls: wrappers the analysis already saw through", () => {
  it.each([
    "git -c core.sshCommand='rm -rf /' fetch",
    "git -c core.pager='rm -rf /' log",
    "git -c core.editor='rm -rf /' commit",
    "git -c credential.helper='!rm -rf /' fetch",
    "git -c alias.x='!rm -rf /' x",
    "find . -exec rm -rf / \\;",
    "echo / | xargs rm -rf",
    "env rm -rf /",
    "timeout 5 rm -rf /",
    "nice rm -rf /",
    "sudo rm -rf /",
    "watch 'rm -rf /'",
    "flock f rm -rf /",
    "script -c 'rm -rf /'",
    "su -c 'rm -rf /'",
    "bash -c 'rm -rf /'",
    "sh -c 'rm -rf /'",
  ])("%s", (command) => expect(decision(command)).toBe("policy_deny"));
});

describe("a harmless command string is no deny", () => {
  it.each([
    "ssh -o ProxyCommand='ssh -W %h:%p bastion' a.org",
    "ssh -o ProxyCommand='rm -rf /tmp/x' a.org",
    "rsync -e ssh f a.org:x",
    "rsync -e 'ssh -p 2222' f a.org:x",
    "GIT_SSH_COMMAND='ssh -i key' git fetch",
    "nc -l 8080",
    "socat TCP-LISTEN:8080 TCP:a.org:80",
  ])("%s", (command) => expect(decision(command)).not.toBe("policy_deny"));

  it("a command string only known at run time stays a question", () => {
    expect(decision('ssh -o ProxyCommand="$P" a.org')).toBe("policy_ask");
    expect(decision('GIT_SSH_COMMAND="$C" git fetch')).toBe("policy_ask");
  });
});
