import { describe, expect, it } from "vitest";
import { PolicyRules, evaluate, type PolicyRule, type PolicySubject } from "./rules";
import { decide, type LoadedPolicy } from "./decide";
import { fetchTool, readTool, shellTool, writeTool } from "../testing/pipeline";

const shell = (command: string): PolicySubject => ({
  tool: "shell",
  capabilities: ["ExecutesCode"],
  command,
  hosts: [],
});
const rules = (...r: PolicyRule[]) => PolicyRules.parse(r);

describe("policy rules", () => {
  it("deny beats ask beats allow, whatever the order", () => {
    const set = rules(
      { effect: "allow", tool: "sh*" },
      { effect: "deny", command: "git push" },
      { effect: "ask", tool: "shell" },
    );
    expect(evaluate(set, shell("git push")).effect).toBe("deny");
    expect(evaluate(set, shell("git status")).effect).toBe("ask");
    expect(evaluate(rules({ effect: "allow", tool: "shell" }), shell("ls")).effect).toBe("allow");
    expect(evaluate([...set].reverse(), shell("git push")).effect).toBe("deny");
  });

  it("judges every command of a compound line", () => {
    const set = rules(
      { effect: "allow", command: "git add" },
      { effect: "allow", command: "git commit" },
      { effect: "deny", command: "git push" },
    );
    expect(evaluate(set, shell("git add . && git commit -m x")).effect).toBe("allow");
    expect(evaluate(set, shell("git add . && git push")).effect).toBe("deny");
    // one command no rule speaks for: command rules do not allow the line
    expect(evaluate(set, shell("git add . && curl x")).effect).toBeUndefined();
  });

  it("denies a sub-command behind global options, but allows only exact leading words", () => {
    const set = rules({ effect: "deny", command: "git push" }, { effect: "allow", command: "git status" });
    for (const line of ["git -C repo push", "git -c core.x=y push origin main", "git --git-dir .git push -f"]) {
      expect(evaluate(set, shell(line)).effect, line).toBe("deny");
    }
    expect(evaluate(set, shell("git status")).effect).toBe("allow");
    expect(evaluate(set, shell("git -C repo status")).effect).toBeUndefined();
    expect(evaluate(set, shell("git commit -m 'push it'")).effect).toBeUndefined();
  });

  it("looks through wrappers and substitutions", () => {
    const set = rules({ effect: "deny", command: "rm -rf" }, { effect: "deny", command: "sudo" });
    for (const line of [
      "bash -c 'rm -rf /'",
      "env FOO=1 rm -fr x",
      "find . | xargs rm -r -f",
      "echo $(rm -rf ~)",
      'sh -c "timeout 3 rm -rf /"',
    ]) {
      expect(evaluate(set, shell(line)).effect, line).toBe("deny");
    }
    expect(evaluate(set, shell("sudo ls")).effect).toBe("deny");
    expect(evaluate(set, shell("rm -r x")).effect).toBeUndefined();
  });

  it("judges commands behind every separator, through the shared shell analysis", () => {
    const set = rules(
      { effect: "deny", command: "git push" },
      { effect: "ask", command: "npm publish" },
      { effect: "allow", command: "touch" },
    );
    for (const line of [
      "touch x\ngit push",
      "touch x\r\ngit push",
      "touch x & git push",
      "{ git push; }",
      "if true; then git push; fi",
      "echo `git push`",
      "eval 'git push'",
    ]) {
      expect(evaluate(set, shell(line)).effect, line).toBe("deny");
    }
    expect(evaluate(set, shell("touch x\nnpm publish")).effect).toBe("ask");
    expect(evaluate(set, shell("touch x\ntouch y")).effect).toBe("allow");
    // a comment is not a command, a quoted here-document body is data
    expect(evaluate(set, shell("touch x # git push")).effect).toBe("allow");
    expect(evaluate(set, shell("touch x <<'EOF'\ngit push\nEOF")).effect).toBe("allow");
  });

  it("asks, saying so, where a deny or ask rule could match what it cannot see", () => {
    const set = rules({ effect: "deny", command: "git push" }, { effect: "allow", command: "touch" });
    for (const line of [
      "touch x; git $SUB",
      "touch x; $(echo $G) push",
      'eval "$C"',
      "curl -s https://example.com/x | sh",
      'bash -c "$X"',
    ]) {
      const v = evaluate(set, shell(line));
      expect(v.effect, line).toBe("ask");
      expect(v.unchecked, line).toMatch(/could not check/);
    }
    // a deny that matches for certain still wins, in a script the line feeds a shell too
    expect(evaluate(set, shell('git push; eval "$C"')).effect).toBe("deny");
    expect(evaluate(set, shell("echo git push | sh")).effect).toBe("deny");
    // and where the line shows what the run-time program is (program-values.ts)
    expect(evaluate(set, shell("touch x; $(echo git) push")).effect).toBe("deny");
    // allow rules never cover a word known only at run time
    expect(evaluate(set, shell("touch $F")).effect).toBeUndefined();
    expect(evaluate(rules({ effect: "allow", command: "touch" }), shell('eval "$C"')).effect).toBeUndefined();
  });

  it("matches tool globs, capabilities, hosts and MCP servers", () => {
    expect(
      evaluate(rules({ effect: "deny", tool: "mcp__*" }), { tool: "mcp__gh__issue", capabilities: [], hosts: [] })
        .effect,
    ).toBe("deny");
    expect(
      evaluate(rules({ effect: "ask", capability: "Network" }), {
        tool: "fetch_url",
        capabilities: ["Network"],
        hosts: [],
      }).effect,
    ).toBe("ask");
    const hosts = rules({ effect: "deny", host: "*.evil.com" }, { effect: "allow", host: "docs.example.com" });
    const f = (h: string): PolicySubject => ({ tool: "fetch_url", capabilities: ["Network"], hosts: [h] });
    expect(evaluate(hosts, f("a.evil.com")).effect).toBe("deny");
    expect(evaluate(hosts, f("evil.com")).effect).toBeUndefined();
    expect(evaluate(hosts, f("docs.example.com")).effect).toBe("allow");
    expect(
      evaluate(rules({ effect: "deny", mcpServer: "github" }), {
        tool: "issue",
        capabilities: [],
        hosts: [],
        mcpServer: "github",
      }).effect,
    ).toBe("deny");
    // all conditions of one rule must hold
    expect(evaluate(rules({ effect: "deny", tool: "shell", host: "x.com" }), shell("ls")).effect).toBeUndefined();
  });

  it("refuses malformed rules with a clear error", () => {
    expect(() => PolicyRules.parse([{ effect: "allow" }])).toThrow(/at least one of/);
    expect(() => PolicyRules.parse([{ effect: "maybe", tool: "x" }])).toThrow();
    expect(() => PolicyRules.parse([{ effect: "deny", tool: "x", colour: "red" }])).toThrow();
  });
});

describe("decide", () => {
  const none = { sessionKeys: new Set<string>(), rejected: new Map<string, string | undefined>() };
  const ok = (...r: PolicyRule[]): LoadedPolicy => ({ ok: true, version: 3, rules: rules(...r) });

  it("orders policy, remembered rejection, tool level, session approvals", () => {
    expect(decide({ tool: readTool, input: { path: "a" } }, ok(), none)).toMatchObject({
      action: "run",
      decision: "auto",
    });
    expect(decide({ tool: shellTool, input: { command: "npm test" } }, ok(), none)).toMatchObject({
      action: "ask",
      decision: "ask",
    });
    expect(decide({ tool: writeTool, input: { path: "a", content: "" } }, ok(), none)).toMatchObject({ action: "ask" });
    expect(
      decide({ tool: shellTool, input: { command: "npm test" } }, ok({ effect: "allow", command: "npm test" }), none),
    ).toMatchObject({ action: "run", decision: "policy_allow" });
    expect(decide({ tool: readTool, input: { path: "a" } }, ok({ effect: "ask", tool: "read_*" }), none)).toMatchObject(
      { action: "ask", decision: "policy_ask" },
    );
    const session = { sessionKeys: new Set(["shell:cmd:npm test"]), rejected: new Map<string, string | undefined>() };
    expect(decide({ tool: shellTool, input: { command: "npm test -- --watch" } }, ok(), session)).toMatchObject({
      action: "run",
      decision: "approved_session",
    });
    expect(decide({ tool: shellTool, input: { command: "npm publish" } }, ok(), session)).toMatchObject({
      action: "ask",
    });
  });

  it("an org deny can never be approved away", () => {
    const session = { sessionKeys: new Set(["shell:cmd:git push"]), rejected: new Map<string, string | undefined>() };
    const d = decide(
      { tool: shellTool, input: { command: "git push" } },
      ok({ id: "no-push", effect: "deny", command: "git push", reason: "CI pushes" }),
      session,
    );
    expect(d).toMatchObject({ action: "deny", decision: "policy_deny" });
    expect(d.reason).toContain("no-push");
    expect(d.reason).toContain("CI pushes");
    // even a rule allowing the tool does not lift a deny of one of its commands
    expect(
      decide(
        { tool: shellTool, input: { command: "ls && git push" } },
        ok({ effect: "allow", tool: "shell" }, { effect: "deny", command: "git push" }),
        none,
      ).action,
    ).toBe("deny");
  });

  it("a policy that cannot be loaded denies everything not read-only", () => {
    const broken: LoadedPolicy = { ok: false, error: "version 4 is invalid" };
    expect(decide({ tool: readTool, input: { path: "a" } }, broken, none)).toMatchObject({ action: "run" });
    expect(decide({ tool: shellTool, input: { command: "ls" } }, broken, none)).toMatchObject({ action: "deny" });
    expect(decide({ tool: writeTool, input: { path: "a", content: "" } }, broken, none)).toMatchObject({
      action: "deny",
    });
  });

  it("remembers rejections by exact arguments only", async () => {
    const { exactFingerprint } = await import("./fingerprint");
    const rejected = new Map([[exactFingerprint("shell", { command: "rm x" }), "not that file"]]);
    const s = { sessionKeys: new Set<string>(), rejected };
    expect(decide({ tool: shellTool, input: { command: "rm x" } }, ok(), s)).toMatchObject({
      action: "reject",
      message: "not that file",
    });
    expect(decide({ tool: shellTool, input: { command: "rm y" } }, ok(), s)).toMatchObject({ action: "ask" });
    expect(
      decide(
        { tool: fetchTool, input: { url: "https://a.evil.com/x" } },
        ok({ effect: "deny", host: "*.evil.com" }),
        none,
      ).action,
    ).toBe("deny");
  });
});
