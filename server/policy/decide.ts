// The decision for one call, in the order the design fixes: org policy (a deny is final and a
// policy that could not be loaded denies everything not read-only), a remembered rejection of
// these exact arguments, the tool's approval level for this input, then the session's approvals.
import type { Tool } from "../tools/tool";
import { evaluate, type PolicyRule, type PolicySubject, type PolicyVerdict } from "./rules";
import { exactFingerprint, hostOf, isOpaqueKey, sessionKeys, type CallFacts } from "./fingerprint";
import { gitPathsOf, isChecksFile } from "./git-paths";
import { analyseShell, type SimpleCommand } from "../shell/analyse";
import { stepInputs, stepSubjects } from "./steps";
import { lineSockets, plantedHosts } from "./hosts";
import { reachedUrls } from "./hosts-clients";

export type LoadedPolicy = { ok: true; version: number; rules: PolicyRule[] } | { ok: false; error: string };

/** Matches ToolCall.decision in the schema. */
export type DecisionKind =
  | "auto"
  | "policy_allow"
  | "policy_ask"
  | "policy_deny"
  | "approved_once"
  | "approved_session"
  | "rejected"
  | "blocked";

export type Decision =
  /** `mode`: the session's mode (policy/modes.ts) waived the tool's own ask. */
  | { action: "run"; decision: "auto" | "policy_allow" | "approved_session"; reason: string; mode?: string }
  | { action: "deny"; decision: "policy_deny"; reason: string }
  | { action: "reject"; decision: "rejected"; reason: string; message?: string }
  | { action: "ask"; decision: "policy_ask" | "ask"; reason: string; unchecked?: string };

export interface SessionApprovalState {
  /** Keys granted "for the session" (see fingerprint.sessionKeys). */
  sessionKeys: ReadonlySet<string>;
  /** exact fingerprint → the person's message, for calls rejected before. */
  rejected: ReadonlyMap<string, string | undefined>;
}

export interface CallView {
  tool: Tool;
  input: unknown;
}

function stringField(input: unknown, key: string): string | undefined {
  const v = input && typeof input === "object" ? (input as Record<string, unknown>)[key] : undefined;
  return typeof v === "string" ? v : undefined;
}

/** The URLs one simple command reaches: wherever a word holds one (`--url=https://…`), and
 *  where a client connects though no scheme says so (`curl evil.com`, `ssh git@evil.com`). */
const commandUrls = (cmd: SimpleCommand): string[] => reachedUrls(cmd);

const hostsOf = (urls: readonly string[]) => urls.map(hostOf).filter((h): h is string => !!h);

/** The facts policy and fingerprints judge: command line, URLs, MCP server. */
export function callFacts({ tool, input }: CallView): CallFacts & { mcpServer?: string } {
  const command = tool.capabilities.includes("ExecutesCode") ? stringField(input, "command") : undefined;
  const urls: string[] = [];
  const url = stringField(input, "url");
  if (url) urls.push(url);
  if (command) {
    for (const cmd of analyseShell(command).commands) urls.push(...commandUrls(cmd));
  }
  const mcpServer = (tool as { mcpServer?: string }).mcpServer ?? /^mcp__([^_].*?)__/.exec(tool.name)?.[1];
  const steps = stepSubjects(tool, input);
  // A wrapper's steps write what their own inputs name (`{ op: "apply_patch", patch }`).
  const written = steps.length > 0 ? stepInputs(input) : [input];
  const gitPaths =
    tool.capabilities.includes("WritesFiles") && tool.source !== "external"
      ? [...new Set(written.flatMap(gitPathsOf))]
      : [];
  return {
    tool: tool.name,
    command,
    urls: [...new Set(urls)],
    ...(gitPaths.length > 0 ? { gitPaths } : {}),
    ...(steps.length > 0 ? { steps: steps.map((s) => s.subject.tool) } : {}),
    ...(tool.source === "external" && mcpServer ? { mcpServer } : {}),
  };
}

/** The tool's capabilities and what this call does besides: a command run with network reaches
 *  the network, and one not read-only may write files, so an org rule on `Network` or
 *  `WritesFiles` catches `shell` called that way, though the tool only declares `ExecutesCode`. */
function callCapabilities({ tool, input }: CallView): readonly string[] {
  const extra: string[] = [];
  if (!tool.capabilities.includes("Network") && tool.isOpenWorld(input)) extra.push("Network");
  if (
    tool.capabilities.includes("ExecutesCode") &&
    !tool.capabilities.includes("WritesFiles") &&
    !tool.isReadOnly(input)
  )
    extra.push("WritesFiles");
  return extra.length > 0 ? [...tool.capabilities, ...extra] : tool.capabilities;
}

export function policySubject(view: CallView): PolicySubject {
  const facts = callFacts(view);
  const hosts = hostsOf(facts.urls ?? []);
  // A socket bash opens reaches its host as surely as a URL does: a deny of the host holds.
  // So does configuration written for a client (`… > ~/.ssh/config`) that names the host.
  const sockets = facts.command !== undefined ? [...lineSockets(facts.command), ...plantedHosts(facts.command)] : [];
  const commandHosts =
    facts.command !== undefined ? analyseShell(facts.command).commands.map((c) => hostsOf(commandUrls(c))) : undefined;
  return {
    tool: facts.tool,
    capabilities: callCapabilities(view),
    command: facts.command,
    hosts,
    ...(commandHosts ? { commandHosts } : {}),
    ...(sockets.length > 0 ? { sockets } : {}),
    mcpServer: facts.mcpServer,
  };
}

const RANK = { allow: 1, ask: 2, deny: 3 } as const;

/** The call's own verdict, then each step's deny or ask (steps.ts) where it is stronger. */
export function evaluateCall(rules: readonly PolicyRule[], view: CallView): PolicyVerdict {
  let verdict = evaluate(rules, policySubject(view));
  for (const { step, subject } of stepSubjects(view.tool, view.input)) {
    const v = evaluate(rules, subject);
    if (v.effect !== "deny" && v.effect !== "ask") continue;
    if (!verdict.effect || RANK[v.effect] > RANK[verdict.effect])
      verdict = { ...v, detail: `step ${step}, ${subject.tool}`, unchecked: verdict.unchecked ?? v.unchecked };
  }
  return verdict;
}

function ruleLabel(v: PolicyVerdict, version: number): string {
  const name = v.rule?.id ? `rule "${v.rule.id}"` : "a rule";
  const why = v.rule?.reason ? `: ${v.rule.reason}` : "";
  const on = v.detail ? ` (on \`${v.detail}\`)` : "";
  return `org policy v${version}, ${name}${on}${why}`;
}

export function decide(view: CallView, policy: LoadedPolicy, session: SessionApprovalState): Decision {
  const { tool, input } = view;
  let verdict: PolicyVerdict = {};
  if (!policy.ok) {
    if (!tool.isReadOnly(input)) {
      return {
        action: "deny",
        decision: "policy_deny",
        reason: `The org policy could not be loaded (${policy.error}); only read-only calls may run until it is fixed.`,
      };
    }
  } else {
    verdict = evaluateCall(policy.rules, view);
    if (verdict.effect === "deny") {
      return { action: "deny", decision: "policy_deny", reason: `Denied by ${ruleLabel(verdict, policy.version)}.` };
    }
  }
  const exact = exactFingerprint(tool.name, input);
  if (session.rejected.has(exact)) {
    return {
      action: "reject",
      decision: "rejected",
      reason: "The person already rejected this exact call in this session.",
      message: session.rejected.get(exact),
    };
  }
  if (policy.ok && verdict.effect === "allow") {
    return { action: "run", decision: "policy_allow", reason: `Allowed by ${ruleLabel(verdict, policy.version)}.` };
  }
  const level = tool.approvalFor(input);
  if (verdict.effect !== "ask" && level === "auto") {
    return { action: "run", decision: "auto", reason: "The tool needs no approval for this input." };
  }
  const facts = callFacts(view);
  const keys = sessionKeys(facts);
  // What the policy could not check is never covered by an earlier approval.
  if (!verdict.unchecked && keys.every((k) => !isOpaqueKey(k) && session.sessionKeys.has(k))) {
    return { action: "run", decision: "approved_session", reason: "Covered by an approval for this session." };
  }
  if (policy.ok && verdict.effect === "ask") {
    if (verdict.unchecked) {
      const by = verdict.rule ? `Approval required by ${ruleLabel(verdict, policy.version)}; ` : "Approval required: ";
      return {
        action: "ask",
        decision: "policy_ask",
        reason: `${by}the org policy could not check every command.`,
        unchecked: verdict.unchecked,
      };
    }
    return {
      action: "ask",
      decision: "policy_ask",
      reason: `Approval required by ${ruleLabel(verdict, policy.version)}.`,
    };
  }
  if (facts.gitPaths) return { action: "ask", decision: "ask", reason: gitPathReason(facts.gitPaths) };
  return { action: "ask", decision: "ask", reason: approvalReason(tool, level) };
}

function gitPathReason(paths: string[]): string {
  const list = paths
    .slice(0, 3)
    .map((p) => `\`${p}\``)
    .join(", ");
  if (paths.every(isChecksFile))
    return `Writes ${list}: the project's checks, whose commands run_check runs, so this is asked about every time.`;
  return `Writes ${list}: files git reads as a repository's configuration (hooks, fsmonitor, filters run programs), so this is asked about every time.`;
}

function approvalReason(tool: Tool, level: string): string {
  if (tool.capabilities.includes("ExecutesCode")) return "Runs a command in your workspace.";
  if (tool.capabilities.includes("WritesFiles")) return "Changes files in your workspace.";
  if (tool.capabilities.includes("Network")) return "Reaches the network.";
  return `The tool asks for approval (${level}).`;
}
