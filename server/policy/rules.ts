// Org policy rules and their evaluation. A rule matches on any combination of tool-name glob,
// capability, shell command prefix, URL host and MCP server (all given conditions must hold) and
// says allow, ask or deny. Deny beats ask beats allow. A command rule judges each simple command
// of the shared shell analysis; the line is allowed by command rules only when every command is.
// A command the analysis cannot see through, where a deny or ask rule could match, is asked
// about with a note that the policy could not check it; so is a command line that may reach a
// host a deny or ask rule names without a URL the policy could read (hosts.ts).
import { z } from "zod";
import { Effect, PolicyRule } from "../protocol/ide-types";
import { analyseShell, type SimpleCommand } from "../shell/analyse";
import { gitMaybeWhy, matchPrefix, mentions } from "./shell";
import { commandMayReach, hostForms, normaliseHost, normalisePattern } from "./hosts";

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
  /** Hosts the command line opens a socket to (`cat </dev/tcp/evil.com/80`), or writes into a
   *  network client's configuration (`… > ~/.ssh/config`): reached as surely as a URL's, for a
   *  deny or ask rule; an allow of the host does not cover the line for it. */
  sockets?: string[];
  /** For a command line, the hosts each of its simple commands reaches by a URL or as a
   *  client's destination, in order: an allow rule on a host covers a line only command by command. */
  commandHosts?: string[][];
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

// Both sides normalised (hosts.ts): `evil.com.`, `[::ffff:a9fe:a9fe]` and a Unicode rule match.
function hostMatches(pattern: string, host: string): boolean {
  const p = normalisePattern(pattern);
  return hostForms(normaliseHost(host)).some((h) =>
    p.startsWith("*.") ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : globToRegExp(p).test(h),
  );
}

// Conditions other than `command`; a host condition holds when any host of the call matches.
function matchesStatic(rule: PolicyRule, s: PolicySubject, skipHost = false): boolean {
  if (rule.tool && !globToRegExp(rule.tool).test(s.tool)) return false;
  if (rule.capability && !s.capabilities.includes(rule.capability)) return false;
  if (rule.host && !skipHost) {
    if (rule.effect === "allow" ? !allowsEveryHost(rule.host, s) : !deniable(s).some((h) => hostMatches(rule.host!, h)))
      return false;
  }
  if (rule.mcpServer && (!s.mcpServer || !globToRegExp(rule.mcpServer).test(s.mcpServer))) return false;
  return true;
}

// A deny or ask of a host holds when the call reaches it in any way, a bash socket included.
const deniable = (s: PolicySubject) => (s.sockets ? [...s.hosts, ...s.sockets] : s.hosts);

// An allow of a host holds only when that host is all the call reaches. On a command line that
// means every command reaches it and nothing else, with no host the policy could not read:
// allowing github.com does not allow `curl https://github.com; rm -rf ~` or a second URL.
// A bash socket is raw TCP to wherever: no allow covers it.
function allowsEveryHost(pattern: string, s: PolicySubject): boolean {
  if (s.sockets?.length || s.hosts.length === 0 || !s.hosts.every((h) => hostMatches(pattern, h))) return false;
  if (s.command === undefined) return true;
  const perCommand = s.commandHosts ?? [];
  const commands = analyseShell(s.command).commands;
  if (perCommand.length !== commands.length || perCommand.some((hosts) => hosts.length === 0)) return false;
  if (!commands.every((c, i) => ownReach(c, commands[i + 1]))) return false;
  const network = s.capabilities.includes("Network");
  return commandMayReach(() => false, "*", commands, network, s.command) === undefined;
}

// The programs whose every destination the analysis reads from their words (hosts-clients.ts).
// Any other program given the URL (`python3 x.py https://github.com`, `./curl …`, `make -f x …`)
// does whatever its code says, so naming an allowed host does not make the call reach only it.
const HOST_CLIENTS = new Set(["curl", "wget", "git"]);

// A client found on PATH by its name, or a wrapper whose command follows it (`timeout 5 curl …`),
// itself judged as the next command.
function ownReach(c: SimpleCommand, next: SimpleCommand | undefined): boolean {
  const program = c.argv[0];
  if (program === undefined) return false;
  if (HOST_CLIENTS.has(program)) return c.words[0]?.text === program && !c.words[0].dynamic;
  return next?.wrappedBy === program;
}

function strongest(a: PolicyVerdict, b: PolicyVerdict): PolicyVerdict {
  if (!b.effect) return a;
  if (!a.effect) return b;
  return RANK[b.effect] > RANK[a.effect] ? b : a;
}

export function evaluate(rules: readonly PolicyRule[], subject: PolicySubject): PolicyVerdict {
  let verdict: PolicyVerdict = {};
  const commandRules: PolicyRule[] = [];
  const unseenHosts: string[] = [];
  for (const rule of rules) {
    if (!matchesStatic(rule, subject)) {
      const unseen = rule.effect !== "allow" && rule.host ? hostUnseen(rule, subject) : undefined;
      if (unseen && !unseenHosts.includes(unseen)) unseenHosts.push(unseen);
      continue;
    }
    if (rule.command) commandRules.push(rule);
    else verdict = strongest(verdict, { effect: rule.effect, rule });
  }
  if (commandRules.length > 0 && subject.command !== undefined) {
    verdict = strongest(verdict, evaluateCommands(commandRules, analyseShell(subject.command).commands));
  }
  if (unseenHosts.length > 0 && verdict.effect !== "deny") {
    const note = `The org policy could not check which hosts ${unseenHosts.slice(0, 3).join("; ")} reaches.`;
    const unchecked = verdict.unchecked ? `${verdict.unchecked} ${note}` : note;
    return verdict.effect === "ask" ? { ...verdict, unchecked } : { effect: "ask", unchecked };
  }
  return verdict;
}

// A deny or ask host rule that holds but for the host, on a command line that may reach that
// host without a URL the policy could read: what it names, builds at run time or hides.
function hostUnseen(rule: PolicyRule, subject: PolicySubject): string | undefined {
  if (subject.command === undefined || !matchesStatic(rule, subject, true)) return undefined;
  let commands = analyseShell(subject.command).commands;
  if (rule.command) commands = commands.filter((c) => matchPrefix(c, ruleWords(rule.command!), "loose") !== "no");
  const network = subject.capabilities.includes("Network");
  return commandMayReach((h) => hostMatches(rule.host!, h), rule.host!, commands, network, subject.command);
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
      const words = ruleWords(rule.command!);
      let m = matchPrefix(cmd, words, rule.effect === "allow" ? "strict" : "loose");
      // `tar --to-command=curl`, `rsync -e curl`, `git config alias.p '!git push'`: the words
      // name the program (and sub-command) a deny or ask rule does, for it to run.
      const named = m === "no" && rule.effect !== "allow" && mentions(cmd, words);
      if (named) m = "maybe";
      if (m === "yes") v = strongest(v, { effect: rule.effect, rule, detail: shown });
      else if (m === "maybe" && rule.effect !== "allow") {
        const why = named
          ? `it names ${words[0]} in its arguments, which it may run`
          : (cmd.opaque ?? cmd.runsCode ?? gitMaybeWhy(cmd, words) ?? "part of it is only known at run time");
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
