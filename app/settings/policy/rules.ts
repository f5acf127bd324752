// The policy page's view of a rule: the same shape the server validates (server/policy/rules.ts),
// a one-line description of what it matches, and the draft rule the add form builds.
import type { PolicyRule } from "../../../server/protocol/ide-types";

export type Rule = PolicyRule;
export const EFFECTS = ["deny", "ask", "allow"] as const;
export const CAPABILITIES = ["ReadsFiles", "WritesFiles", "ExecutesCode", "Network", "Interactive"] as const;

export interface Draft {
  effect: Rule["effect"];
  tool: string;
  capability: string;
  command: string;
  host: string;
  reason: string;
}

export const emptyDraft: Draft = { effect: "deny", tool: "", capability: "", command: "", host: "", reason: "" };

/** The rule a draft describes, or a message saying what is missing. */
export function ruleFromDraft(d: Draft): { ok: true; rule: Rule } | { ok: false; error: string } {
  const rule: Rule = { effect: d.effect };
  if (d.tool.trim()) rule.tool = d.tool.trim();
  if (d.capability) rule.capability = d.capability as Rule["capability"];
  if (d.command.trim()) rule.command = d.command.trim();
  if (d.host.trim()) rule.host = d.host.trim();
  if (d.reason.trim()) rule.reason = d.reason.trim();
  if (!rule.tool && !rule.capability && !rule.command && !rule.host) {
    return { ok: false, error: "Say what the rule matches: a tool, a capability, a command or a host." };
  }
  return { ok: true, rule };
}

/** "tool read_* · command `git push`": every condition the rule puts on a call. */
export function describeMatch(r: Rule): string {
  const parts: string[] = [];
  if (r.tool) parts.push(`tool ${r.tool}`);
  if (r.capability) parts.push(`capability ${r.capability}`);
  if (r.command) parts.push(`command \`${r.command}\``);
  if (r.host) parts.push(`host ${r.host}`);
  if (r.mcpServer) parts.push(`MCP server ${r.mcpServer}`);
  return parts.join(" · ");
}

/** Rules in the order they are weighed: deny, then ask, then allow (order within kept). */
export function byStrength(rules: readonly Rule[]): { rule: Rule; index: number }[] {
  const rank = { deny: 0, ask: 1, allow: 2 } as const;
  return rules
    .map((rule, index) => ({ rule, index }))
    .sort((a, b) => rank[a.rule.effect] - rank[b.rule.effect] || a.index - b.index);
}
