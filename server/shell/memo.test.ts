// The analysis memo (memo.ts): one tool call's policy, approvals, classifiers and card analyse
// its line once; the shared answer cannot be changed by a consumer for the next one; the memo
// keeps the least recently used lines out and never holds more entries or characters than
// its bounds, whatever lines the model sends.
import { beforeEach, describe, expect, it } from "vitest";
import { analyseShell, type SimpleCommand, type Word } from "./analyse";
import { clearMemo, MEMO_MAX_CHARS, MEMO_MAX_ENTRIES, memoStats } from "./memo";
import { dangerReason } from "./danger";
import { decide, type LoadedPolicy } from "../policy/decide";
import { PolicyRules } from "../policy/rules";
import { approvalCard } from "../pipeline/card";
import { shellTool } from "../tools/builtin/shell";

const askPush: LoadedPolicy = {
  ok: true,
  version: 1,
  rules: PolicyRules.parse([{ id: "ask-push", effect: "ask", command: "git push" }]),
};
const noApprovals = { sessionKeys: new Set<string>(), rejected: new Map<string, string | undefined>() };
const analysesOf = (fn: () => void) => {
  const before = memoStats().analyses;
  fn();
  return memoStats().analyses - before;
};

beforeEach(() => clearMemo());

describe("shell analysis memo", () => {
  it("analyses a call's line once across policy, session keys, classifiers and the card", () => {
    // The rule's own words are analysed (and kept by the policy) on first use: not the call's.
    decide({ tool: shellTool, input: { command: "true" } }, askPush, noApprovals);
    const line = "npm test && git push origin main; rm -rf build > log.txt";
    const n = analysesOf(() => {
      const d = decide({ tool: shellTool, input: { command: line } }, askPush, noApprovals);
      expect(d).toMatchObject({ action: "ask", decision: "policy_ask" });
      const card = approvalCard(shellTool, { command: line }, d.reason);
      expect(card.destructive?.reason).toMatch(/deletes files/);
      expect(shellTool.isReadOnly({ command: line })).toBe(false);
    });
    expect(n).toBe(1);
  });

  it("hands every caller a frozen answer: a consumer that writes to it throws, the next reads the original", () => {
    const line = "rm -rf / && echo done > out.txt";
    const a = analyseShell(line);
    const rm = a.commands[0];
    expect(() => ((rm.argv as string[])[0] = "ls")).toThrow(TypeError);
    expect(() => (rm.words as Word[]).splice(1)).toThrow(TypeError);
    expect(() => ((rm as { opaque?: string }).opaque = "x")).toThrow(TypeError);
    expect(() => (a.commands as SimpleCommand[]).pop()).toThrow(TypeError);
    expect(() => ((a.writeTargets[0] as { text: string }).text = "/dev/null")).toThrow(TypeError);
    expect(() => ((a as { writes: boolean }).writes = false)).toThrow(TypeError);
    const again = analyseShell(line);
    expect(again).toBe(a);
    expect(again.commands.map((c) => c.argv)).toEqual([
      ["rm", "-rf", "/"],
      ["echo", "done"],
    ]);
    expect(again.writeTargets.map((t) => t.text)).toEqual(["out.txt"]);
    expect(dangerReason(line)).toMatch(/deletes files/);
  });

  it("keys by the exact line: a line one byte longer is its own entry", () => {
    expect(analyseShell("ls").commands[0].argv).toEqual(["ls"]);
    expect(analyseShell("ls ").commands[0].argv).toEqual(["ls"]);
    expect(analyseShell("ls;rm -rf x").commands.map((c) => c.argv[0])).toEqual(["ls", "rm"]);
    expect(memoStats().entries).toBe(3);
  });

  it("holds at most its entries, dropping the least recently used first", () => {
    const first = "echo line-0";
    analyseShell(first);
    for (let i = 1; i < MEMO_MAX_ENTRIES; i++) analyseShell(`echo line-${i}`);
    expect(memoStats().entries).toBe(MEMO_MAX_ENTRIES);
    expect(analysesOf(() => analyseShell(first))).toBe(0); // a hit: now the most recent
    analyseShell("echo one more");
    expect(memoStats().entries).toBe(MEMO_MAX_ENTRIES);
    expect(analysesOf(() => analyseShell(first))).toBe(0);
    expect(analysesOf(() => analyseShell("echo line-1"))).toBe(1); // the oldest went
  });

  it("holds at most its characters, however long the lines", () => {
    for (let i = 0; i < 30; i++) {
      const line = `echo ${i} ${"a".repeat(90_000)}`;
      const a = analyseShell(line);
      expect(a.commands.length).toBeGreaterThan(0);
      expect(memoStats().chars).toBeLessThanOrEqual(MEMO_MAX_CHARS);
    }
    expect(memoStats().entries).toBeGreaterThan(0);
    expect(memoStats().entries).toBeLessThan(30);
    // Past what the parser reads nothing is kept: its answer costs nothing to make again.
    const huge = `echo ${"b".repeat(200_000)}`;
    const before = memoStats().entries;
    expect(analyseShell(huge).commands[0].opaque).toMatch(/too long/);
    expect(memoStats().entries).toBe(before);
  });
});
