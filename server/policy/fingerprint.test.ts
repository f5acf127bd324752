import { describe, expect, it } from "vitest";
import {
  arityPrefix,
  canonicalJson,
  describeKeys,
  exactFingerprint,
  isOpaqueKey,
  plainKeys,
  sessionKeys,
} from "./fingerprint";

const covers = (approved: string, later: string) => {
  const granted = new Set(sessionKeys({ tool: "shell", command: approved }));
  return sessionKeys({ tool: "shell", command: later }).every((k) => !isOpaqueKey(k) && granted.has(k));
};

describe("fingerprints", () => {
  it("exact fingerprints ignore key order but not values", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}',
    );
    expect(exactFingerprint("shell", { command: "ls", cwd: "." })).toBe(
      exactFingerprint("shell", { cwd: ".", command: "ls" }),
    );
    expect(exactFingerprint("shell", { command: "ls" })).not.toBe(exactFingerprint("shell", { command: "ls " }));
    expect(exactFingerprint("shell", { command: "ls" })).not.toBe(exactFingerprint("bash", { command: "ls" }));
  });

  it.each([
    ["npm test", "npm test -- --watch", true],
    ["npm test", "npm publish", false],
    ["npm run build", "npm run build -- --prod", true],
    ["npm run build", "npm run deploy", false],
    ["git status", "git status --short", true],
    ["git status", "git push", false],
    ["git stash list", "git stash drop", false],
    ["ls -la", "ls src", true],
    ["npm test", "npm test && npm publish", false],
    ["npm test && git status", "git status", true],
    ["npm test", "bash -c 'npm test'", false],
    ["docker compose up", "docker compose down", false],
    ["sudo npm test", "sudo rm -rf /", false],
    ["touch x.txt", "touch x.txt\ngit push origin HEAD", false],
    ["touch x.txt", "touch y.txt\npython3 -c 'import os'", false],
    ["npm test", "FOO=1 npm test", false],
    ["rm notes.txt", "rm $(cat list)", false],
    ["cat a.txt", "cat *.txt", false],
    ['eval "$X"', 'eval "$X"', false],
  ])("approving `%s` for the session covers `%s`: %s", (approved, later, expected) => {
    expect(covers(approved, later)).toBe(expected);
  });

  it("arity skips flags and stops at the table's arity", () => {
    expect(arityPrefix(["npm", "--silent", "test", "--", "--watch"])).toEqual(["npm", "test"]);
    expect(arityPrefix(["cat", "a", "b", "c"])).toEqual(["cat"]);
  });

  // An option's value is no sub-command word: `git -C sub log` is `git log`, never `git sub`.
  it.each([
    ["git -C sub log", "git -C sub push origin main"],
    ["git -C sub log", "git -C sub config alias.x '!touch pwned'"],
    ["git --git-dir=.git log", "git --git-dir=.git push"],
    ["git --work-tree w log", "git --work-tree w push"],
    ["kubectl -n prod get pods", "kubectl -n prod delete deployment api"],
    ["kubectl --context prod get pods", "kubectl --context prod delete pod x"],
    ["kubectl config --kubeconfig k view", "kubectl config --kubeconfig k use-context prod"],
    ["npm --prefix web test", "npm --prefix web publish"],
    ["npm -w web test", "npm -w web publish"],
    ["npm run --prefix web test", "npm run --prefix web deploy"],
    ["npm run -s test", "npm run -s deploy"],
    ["make -C app test", "make -C app deploy"],
    ["make -f build.mk test", "make -f build.mk deploy"],
    ["python3 -W ignore test.py", "python3 -W ignore evil.py"],
    ["python3 -m pytest", "python3 -m pip install evil"],
    ["cargo +nightly test", "cargo +nightly publish"],
    ["cargo +nightly test", "cargo test"],
    ["docker -H tcp://h:2375 ps", "docker -H tcp://h:2375 run --privileged alpine"],
    ["docker compose -f x.yml ps", "docker compose -f x.yml down"],
    ["aws --region eu s3 ls", "aws --region eu s3 rb s3://b"],
    // an option the table does not know: only the exact command
    ["npm --frob web test", "npm --frob web publish"],
    ["npm --frob web test", "npm --frob x test"],
    ["npm --script-shell=./evil.sh test", "npm --script-shell=./other.sh test"],
    ["git --frob x log", "git --frob x push"],
    ["node -r ./a.js test.js", "node -r ./evil.js test.js"],
  ])("approving `%s` does not cover `%s`", (approved, later) => {
    expect(covers(approved, later)).toBe(false);
  });

  it.each([
    ["git -C sub log", "git log -p"],
    ["git -C sub log", "git -C other log"],
    ["kubectl -n prod get pods", "kubectl get deployments"],
    ["npm --prefix web test", "npm test -- --watch"],
    ["python3 -W ignore test.py", "python3 test.py --fast"],
    ["python3 -m pytest", "python3 -m pytest -x"],
    ["cargo +nightly test", "cargo +nightly test --release"],
    ["npm --frob web test", "npm --frob web test"],
  ])("approving `%s` covers `%s`", (approved, later) => {
    expect(covers(approved, later)).toBe(true);
  });

  it("the card names what is approved", () => {
    const allows = (line: string) => describeKeys(sessionKeys({ tool: "shell", command: line }));
    expect(allows("git -C sub log")).toBe("git log *");
    expect(allows("kubectl -n prod get pods")).toBe("kubectl get *");
    expect(allows("python3 -W ignore test.py")).toBe("python3 test.py *");
    expect(allows("python3 -m pytest tests")).toBe("python3 -m pytest *");
    expect(allows("cargo +nightly test")).toBe("cargo +nightly test *");
    expect(allows("npm --frob web test")).toBe("exactly `npm --frob web test`");
  });

  it("URL tools are keyed by host, others by tool", () => {
    expect(sessionKeys({ tool: "fetch_url", urls: ["https://Docs.Example.com/a?b"] })).toEqual([
      "fetch_url:host:docs.example.com",
    ]);
    expect(sessionKeys({ tool: "write_file" })).toEqual(["write_file"]);
    expect(describeKeys(sessionKeys({ tool: "shell", command: "npm test -- --watch" }))).toBe("npm test *");
  });

  it("a push is keyed by its whole URL: one repository approved is not every one on its host", () => {
    const keys = sessionKeys({ tool: "git_push", urls: ["https://github.com/me/app.git"] });
    expect(keys).toEqual(["git_push:url:https://github.com/me/app.git"]);
    expect(sessionKeys({ tool: "git_push", urls: ["https://github.com/attacker/x.git"] })).not.toEqual(keys);
    expect(describeKeys(keys)).toBe("exactly https://github.com/me/app.git");
    expect(plainKeys(keys)).toEqual([
      "Allow git_push to https://github.com/me/app.git (this URL only) for this session",
    ]);
    expect(sessionKeys({ tool: "git_push", urls: ["https://github.com/a\ngit_push:url:https://x/y"] })).toEqual([
      "git_push:opaque:url",
    ]);
  });
});

describe("session approvals of dangerous commands", () => {
  it("cover only the exact dangerous command, never a harmless one's approval", () => {
    const approvedRm = new Set(sessionKeys({ tool: "shell", command: "rm notes.txt" }));
    const rf = sessionKeys({ tool: "shell", command: "rm -rf build" });
    expect(rf.every((k) => approvedRm.has(k))).toBe(false);
    const approvedRf = new Set(rf);
    expect(sessionKeys({ tool: "shell", command: "rm -rf build" }).every((k) => approvedRf.has(k))).toBe(true);
    expect(sessionKeys({ tool: "shell", command: "rm -rf /" }).every((k) => approvedRf.has(k))).toBe(false);
  });
});

describe("session approvals of compound shell syntax", () => {
  it("cover only the exact loop, never another loop's body", () => {
    const approved = new Set(
      sessionKeys({ tool: "shell", command: "for i in 1 2 3; do echo line-$i; sleep 0.4; done" }),
    );
    expect(
      sessionKeys({ tool: "shell", command: "for i in 1 2 3; do echo line-$i; sleep 0.4; done" }).every((k) =>
        approved.has(k),
      ),
    ).toBe(true);
    expect(
      sessionKeys({ tool: "shell", command: "for f in *; do rm -rf $f; done" }).every((k) => approved.has(k)),
    ).toBe(false);
    expect(sessionKeys({ tool: "shell", command: "if true; then curl x | sh; fi" }).every((k) => approved.has(k))).toBe(
      false,
    );
  });
});

describe("session approvals of writes that steer git", () => {
  it("are never covered: each is asked about", () => {
    expect(sessionKeys({ tool: "write_file", gitPaths: ["tools/HEAD"] })).toEqual(["write_file:opaque:tools/HEAD"]);
    expect(describeKeys(["write_file:opaque:tools/HEAD"])).toMatch(/asked about every time/);
  });
});
