// Round two of the policy's red team: lines that got past a deny or ran unasked under an allow,
// each checked against the real program (curl 7.88, wget 1.21, git 2.39, python 3) first.
import { describe, expect, it } from "vitest";
import { judgeShell, policyOf } from "../testing/policy";

const clients = ["curl", "wget", "git"].map((command) => ({ effect: "allow" as const, command }));
const noEvil = policyOf({ effect: "deny", host: "evil.com" }, ...clients);
const github = policyOf({ effect: "allow", host: "github.com" });
const noRm = policyOf({ effect: "deny", command: "rm" });

describe("a deny of a host holds for curl's other spellings of a URL", () => {
  it.each([
    // `-:` is curl's `--next`: the URL after it is fetched too.
    "curl http://a.org -: evil.com",
    // curl reads `http:/evil.com` (one slash) as http://evil.com.
    "curl 'http:/evil.com'",
    "curl -x 'http:/evil.com' http://a.org",
  ])("%s is denied", (command) => expect(judgeShell(command, noEvil).decision).toBe("policy_deny"));
});

describe("an allow of a host covers only clients that reach nothing else", () => {
  it.each([
    // Any other program handed the URL runs code of its own.
    "python3 evil.py https://github.com",
    "node evil.js https://github.com",
    "make -f evil.mk https://github.com",
    "./curl https://github.com",
    "/tmp/curl https://github.com",
    "touch https://github.com",
    "timeout 5 ./evil https://github.com",
    // curl to a local socket, or a local file, is not github.com.
    "curl --unix-socket /var/run/docker.sock https://github.com/containers/create",
    "curl --abstract-unix-socket x https://github.com",
    "curl file:///etc/passwd https://github.com",
    // wget runs the program --use-askpass names; clone's config and template hooks run.
    "wget https://github.com --use-askpass=./evil.sh",
    "git clone -c core.hooksPath=/tmp/h https://github.com/a/b",
    "git clone https://github.com/a/b --config=core.fsmonitor=./evil",
    "git clone --template=/tmp/t https://github.com/a/b",
  ])("%s is not allowed", (command) => expect(judgeShell(command, github).decision).not.toBe("policy_allow"));
});

describe("a denied command in what git clone's config runs is denied", () => {
  it.each([
    "git clone -c core.sshCommand='rm -rf y' git@github.com:a/b",
    "git clone --config=core.sshCommand='rm -rf y' git@github.com:a/b",
    "git clone https://github.com/a/b --config core.fsmonitor='rm -rf y'",
    "git clone -ccore.fsmonitor='rm -rf y' https://github.com/a/b",
  ])("%s is denied", (command) => expect(judgeShell(command, noRm).decision).toBe("policy_deny"));
});

describe("python reading its program from stdin is asked about, not run", () => {
  it.each([
    // `-` after an option's value is the script: python runs stdin.
    "python3 -W ignore - <<< 'import os'",
    "python3 -X importtime - <<< 'import os'",
    // Its interactive console runs what stdin says.
    "python3 -m code <<< 'import os'",
    "python3 -i x.py <<< 'import os'",
    "echo 'import os' | python3 -m asyncio",
  ])("%s is asked", (command) => {
    const { decision, auto } = judgeShell(command, noRm);
    expect(decision).toBe("policy_ask");
    expect(auto).toBe("ask");
  });
});
