import { describe, expect, it } from "vitest";
import { arityPrefix, canonicalJson, describeKeys, exactFingerprint, isOpaqueKey, sessionKeys } from "./fingerprint";

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

  it("URL tools are keyed by host, others by tool", () => {
    expect(sessionKeys({ tool: "fetch_url", urls: ["https://Docs.Example.com/a?b"] })).toEqual([
      "fetch_url:host:docs.example.com",
    ]);
    expect(sessionKeys({ tool: "write_file" })).toEqual(["write_file"]);
    expect(describeKeys(sessionKeys({ tool: "shell", command: "npm test -- --watch" }))).toBe("npm test *");
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
