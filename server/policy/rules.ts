// Org policy rules and their evaluation. A rule matches on any combination of tool-name glob,
// capability, shell command prefix, URL host and MCP server (all given conditions must hold) and
// says allow, ask or deny. Deny beats ask beats allow. A command rule judges each simple command
// of the shared shell analysis; the line is allowed by command rules only when every command is.
// A command the analysis cannot see through, where a deny or ask rule could match, is asked
// about with a note that the policy could not check it.
import { z } from "zod";
import { Effect, PolicyRule } from "../protocol/ide-types";
import { analyseShell, type SimpleCommand } from "../shell/analyse";
import { matchPrefix } from "./shell";

// The rule's shape crosses to the IDE (its settings page), so it lives in the protocol.
export { Effect, PolicyRule };

export const PolicyRules = z.array(PolicyRule).max(1000);

/** What a rule can see of a call. */
export interface PolicySubject {
  tool: string;
  capabilities: readonly string[];
  /** The shell command line, when the tool runs one. */
  command?: string;
  hosts: string[];
  mcpServer?: string;
}

export interface PolicyVerdict {
  /** undefined: no rule spoke; the tool's own approval level decides. */
  effect?: Effect;
  rule?: PolicyRule;
  /** For command rules: the simple command that decided. */
  detail?: string;
  /** Commands a deny or ask rule could match but the analysis could not see through, and why. */
  unchecked?: string;
}

const RANK: Record<Effect, number> = { allow: 1, ask: 2, deny: 3 };

export function globToRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${body}$`, "i");
}

function hostMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase();
  if (p.startsWith("*.")) return host.endsWith(p.slice(1)) && host.length > p.length - 1;
  return globToRegExp(p).test(host);
}

// Conditions other than `command`; a host condition holds when any host of the call matches.
function matchesStatic(rule: PolicyRule, s: PolicySubject): boolean {
  if (rule.tool && !globToRegExp(rule.tool).test(s.tool)) return false;
  if (rule.capability && !s.capabilities.includes(rule.capability)) return false;
  if (rule.host && !s.hosts.some((h) => hostMatches(rule.host!, h))) return false;
  if (rule.mcpServer && (!s.mcpServer || !globToRegExp(rule.mcpServer).test(s.mcpServer))) return false;
  return true;
}

function strongest(a: PolicyVerdict, b: PolicyVerdict): PolicyVerdict {
  if (!b.effect) return a;
  if (!a.effect) return b;
  return RANK[b.effect] > RANK[a.effect] ? b : a;
}

export function evaluate(rules: readonly PolicyRule[], subject: PolicySubject): PolicyVerdict {
  let verdict: PolicyVerdict = {};
  const commandRules: PolicyRule[] = [];
  for (const rule of rules) {
    if (!matchesStatic(rule, subject)) continue;
    if (rule.command) commandRules.push(rule);
    else verdict = strongest(verdict, { effect: rule.effect, rule });
  }
  if (commandRules.length > 0 && subject.command !== undefined) {
    verdict = strongest(verdict, evaluateCommands(commandRules, analyseShell(subject.command).commands));
  }
  return verdict;
}

// Each simple command gets its strongest matching rule. Deny or ask anywhere decides; allow
// holds only when every command is allowed, else command rules say nothing. A deny or ask rule
// that only maybe matches (a word known at run time, an opaque command) makes the line an ask.
function evaluateCommands(rules: PolicyRule[], commands: readonly SimpleCommand[]): PolicyVerdict {
  let worst: PolicyVerdict = {};
  let allAllowed = commands.length > 0;
  let allowRule: PolicyRule | undefined;
  const unchecked: string[] = [];
  for (const cmd of commands) {
    let v: PolicyVerdict = {};
    const shown = cmd.argv.length > 0 ? cmd.argv.join(" ") : cmd.source;
    for (const rule of rules) {
      const m = matchPrefix(cmd, ruleWords(rule.command!), rule.effect === "allow" ? "strict" : "loose");
      if (m === "yes") v = strongest(v, { effect: rule.effect, rule, detail: shown });
      else if (m === "maybe" && rule.effect !== "allow") {
        const why = cmd.opaque ?? cmd.runsCode ?? "part of it is only known at run time";
        if (!unchecked.some((u) => u.startsWith(`\`${cmd.source}\``))) unchecked.push(`\`${cmd.source}\` (${why})`);
      }
    }
    if (v.effect === "allow" && !cmd.opaque) allowRule ??= v.rule;
    else allAllowed = false;
    if (v.effect === "ask" || v.effect === "deny") worst = strongest(worst, v);
  }
  if (worst.effect === "deny") return worst;
  if (unchecked.length > 0) {
    const note = `The org policy could not check ${unchecked.slice(0, 3).join("; ")}${unchecked.length > 3 ? ` and ${unchecked.length - 3} more` : ""}.`;
    return worst.effect ? { ...worst, unchecked: note } : { effect: "ask", unchecked: note };
  }
  if (worst.effect) return worst;
  if (allAllowed)
    return { effect: "allow", rule: allowRule, detail: commands.map((c) => c.argv.join(" ")).join(" ; ") };
  return {};
}

const wordsCache = new Map<string, string[]>();
/** A rule's command prefix as words; not unwrapped, so a rule can name `sudo` itself. */
export function ruleWords(command: string): string[] {
  let words = wordsCache.get(command);
  if (!words) {
    const first = analyseShell(command).commands.find((c) => c.argv.length > 0 && !c.wrappedBy);
    words = first ? first.words.filter((w) => !w.dynamic).map((w, i) => (i === 0 ? first.argv[0] : w.text)) : [];
    if (wordsCache.size > 10_000) wordsCache.clear();
    wordsCache.set(command, words);
  }
  return words;
}
