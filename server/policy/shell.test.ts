import { describe, expect, it } from "vitest";
import { commandsOf, matchPrefix, matchesPrefix } from "./shell";

describe("commandsOf (the shared shell analysis, as the policy sees it)", () => {
  it.each([
    [
      "git add . && git push",
      [
        ["git", "add", "."],
        ["git", "push"],
      ],
    ],
    ["ls | grep x; echo done", [["ls"], ["grep", "x"], ["echo", "done"]]],
    [
      "echo hi > out.txt && cat out.txt",
      [
        ["echo", "hi"],
        ["cat", "out.txt"],
      ],
    ],
    ["/usr/bin/git status", [["git", "status"]]],
    ["FOO=1 npm test", [["npm", "test"]]],
    [
      "bash -c 'npm test && npm publish'",
      [
        ["bash", "-c", "npm test && npm publish"],
        ["npm", "test"],
        ["npm", "publish"],
      ],
    ],
    [
      'sh -lc "rm -rf /tmp/x"',
      [
        ["sh", "-lc", "rm -rf /tmp/x"],
        ["rm", "-rf", "/tmp/x"],
      ],
    ],
    [
      "env -i FOO=1 git push",
      [
        ["env", "-i", "FOO=1", "git", "push"],
        ["git", "push"],
      ],
    ],
    [
      "find . -name '*.o' | xargs -n 1 rm -f",
      [
        ["find", ".", "-name", "*.o"],
        ["xargs", "-n", "1", "rm", "-f"],
        ["rm", "-f", "<input of xargs>"],
      ],
    ],
    [
      "sudo -u root rm -rf /",
      [
        ["sudo", "-u", "root", "rm", "-rf", "/"],
        ["rm", "-rf", "/"],
      ],
    ],
    [
      "timeout 5 curl http://x",
      [
        ["timeout", "5", "curl", "http://x"],
        ["curl", "http://x"],
      ],
    ],
    [
      "echo $(rm -rf /)",
      [
        ["rm", "-rf", "/"],
        ["echo", "$(rm -rf /)"],
      ],
    ],
    ["echo `whoami`", [["whoami"], ["echo", "`whoami`"]]],
    ["(cd x; make)", [["cd", "x"], ["make"]]],
    ["echo $HOME", [["echo", "$HOME"]]],
    [
      "bash -c \"bash -c 'git push'\"",
      [
        ["bash", "-c", "bash -c 'git push'"],
        ["bash", "-c", "git push"],
        ["git", "push"],
      ],
    ],
    [
      "touch x.txt\ngit push origin HEAD",
      [
        ["touch", "x.txt"],
        ["git", "push", "origin", "HEAD"],
      ],
    ],
  ])("%j", (line, expected) => {
    expect(commandsOf(line).map((c) => c.argv)).toEqual(expected);
  });
});

const cmd = (line: string) => commandsOf(line)[0];

describe("matchPrefix", () => {
  it.each([
    ["git push origin main", ["git", "push"], true],
    ["git pull", ["git", "push"], false],
    ["rm -r -f x", ["rm", "-rf"], true],
    ["rm -fr x", ["rm", "-rf"], true],
    ["rm -r x", ["rm", "-rf"], false],
    ["npm test -- --watch", ["npm", "test"], true],
    ["npm publish", ["npm", "test"], false],
    ["git status", ["/usr/bin/git"], true],
    ["gitk", ["git"], false],
  ])("%j starts with %j: %s", (line, prefix, expected) => {
    expect(matchesPrefix(cmd(line), prefix)).toBe(expected);
  });

  it("a word known only at run time is a maybe, for deny and allow alike", () => {
    expect(matchPrefix(cmd("git $SUB"), ["git", "push"], "loose")).toBe("maybe");
    expect(matchPrefix(cmd("rm $FLAGS x"), ["rm", "-rf"], "loose")).toBe("maybe");
    expect(matchPrefix(cmd("npm test $ARGS"), ["npm", "test"], "strict")).toBe("maybe");
    expect(matchPrefix(cmd("$P push"), ["git", "push"], "loose")).toBe("maybe");
    expect(matchPrefix(cmd("curl $URL"), ["git", "push"], "loose")).toBe("no");
    expect(matchPrefix(cmd("git push $REMOTE"), ["git", "push"], "loose")).toBe("yes");
  });
});

// Other spellings of what a deny on `git push --force`, `git push --delete` or `rm -rf` names.
describe("matchPrefix reads what an option does, not only its name", () => {
  it.each([
    ["git push --mirror", ["git", "push", "--force"], true],
    ["git push --mirror origin", ["git", "push", "--delete"], true],
    ["git push --mirr origin", ["git", "push", "-f"], true],
    ["git push origin :main", ["git", "push", "--delete"], true],
    ["git push origin +:main", ["git", "push", "--delete"], true],
    ["git push origin :refs/tags/v1", ["git", "push", "-d"], true],
    ["git push --prune origin", ["git", "push", "--delete"], true],
    ["git push origin +main", ["git", "push", "--force"], true],
    // `:` alone pushes the matching branches: no delete
    ["git push origin :", ["git", "push", "--delete"], false],
    ["git push origin main:main", ["git", "push", "--delete"], false],
    ["git push origin main", ["git", "push", "--force"], false],
    ["rm -r --interactive=never x", ["rm", "-rf"], true],
    ["rm -r --interactive=none x", ["rm", "-rf"], true],
    ["rm -r --interactive=no x", ["rm", "-rf"], true],
    ["rm -r --inter=n x", ["rm", "-rf"], true],
    ["rm -R --interactive=ne x", ["rm", "-rf"], true],
    ["rm -r --interactive=always x", ["rm", "-rf"], false],
    ["rm -r --interactive x", ["rm", "-rf"], false],
    ["rm -r --interactive=once x", ["rm", "-rf"], false],
  ])("%j matches a deny on %j: %s", (line, prefix, expected) => {
    expect(matchPrefix(cmd(line), prefix, "loose") === "yes").toBe(expected);
  });
});
