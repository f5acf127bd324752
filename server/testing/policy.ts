// Test helpers for the org policy: a loaded policy from rules, a session with no approvals, and
// a shell line judged as the pipeline judges it (decide()) and as auto mode then acts on it.
import { decide, type LoadedPolicy } from "../policy/decide";
import { applyMode } from "../policy/modes";
import { PolicyRules, type PolicyRule } from "../policy/rules";
import { shellTool } from "../tools/builtin/shell";

export const noApprovals = { sessionKeys: new Set<string>(), rejected: new Map<string, string | undefined>() };

export const policyOf = (...rules: PolicyRule[]): LoadedPolicy => ({
  ok: true,
  version: 1,
  rules: PolicyRules.parse(rules),
});

/** The decision for `command` run by the shell tool, and auto mode's action on it. */
export function judgeShell(command: string, policy: LoadedPolicy, network = true) {
  const { decision, auto } = judgeShellNoting(command, policy, network);
  return { decision, auto };
}

/** judgeShell, with what the card says the policy could not check. */
export function judgeShellNoting(command: string, policy: LoadedPolicy, network = true) {
  const view = { tool: shellTool, input: { command, network } };
  const d = decide(view as never, policy, noApprovals);
  return {
    decision: d.decision,
    auto: applyMode("auto", d, view as never).action,
    unchecked: d.action === "ask" ? d.unchecked : undefined,
  };
}
