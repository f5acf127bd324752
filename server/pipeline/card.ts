// What an approval card shows: the tool, a one-line summary, the exact command, diff or URL,
// why it needs approval, whether the command is destructive (and what it could destroy), and
// what "for this session" would cover, in plain sentences. Built from the exact input
// the approval is bound to. A change longer than a card shows is clipped there, and the whole of
// it is stored (approve.ts) for the card's "show the whole change": a person never approves text
// they had no way to read.
import { createTwoFilesPatch } from "diff";
import type { ApprovalRequest } from "../protocol/events";
import type { Tool } from "../tools/tool";
import { callFacts } from "../policy/decide";
import { describeKeys, plainKeys, sessionKeys } from "../policy/fingerprint";
import { dangerReason } from "../shell/danger";

/** The most of a change a card carries in its event; the rest is behind `diffRef`. */
export const MAX_DIFF = 20_000;

function str(input: unknown, ...keys: string[]): string | undefined {
  if (!input || typeof input !== "object") return undefined;
  for (const k of keys) {
    const v = (input as Record<string, unknown>)[k];
    if (typeof v === "string") return v;
  }
  return undefined;
}

/** createTwoFilesPatch starts with a "====" separator line that says nothing on a card. */
function patch(...args: Parameters<typeof createTwoFilesPatch>): string {
  return createTwoFilesPatch(...args).replace(/^=+\n/, "");
}

function clip(text: string): string {
  return text.length > MAX_DIFF ? `${text.slice(0, MAX_DIFF)}\n… (${text.length - MAX_DIFF} more characters)` : text;
}

/** The whole unified diff of the change an edit or write proposes, when the input describes one. */
export function proposedChange(input: unknown): string | undefined {
  const given = str(input, "diff", "patch");
  if (given) return given;
  const path = str(input, "path", "file_path") ?? "file";
  const oldStr = str(input, "old_str", "old_string");
  const newStr = str(input, "new_str", "new_string");
  if (oldStr !== undefined && newStr !== undefined) {
    return patch(`a/${path}`, `b/${path}`, `${oldStr}\n`, `${newStr}\n`, undefined, undefined, { context: 2 });
  }
  const content = str(input, "content");
  if (content !== undefined)
    return patch("/dev/null", `b/${path}`, "", content.endsWith("\n") ? content : `${content}\n`);
  return undefined;
}

/** `proposedChange` as a card shows it: clipped, saying how much was left out. */
export function proposedDiff(input: unknown): string | undefined {
  const whole = proposedChange(input);
  return whole === undefined ? undefined : clip(whole);
}

/** The whole change a card for this call shows (none for a command): the tool's own preview
 *  `diff` (the file's real lines) when it has one, else what the input describes. */
export function cardChange(tool: Tool, input: unknown, diff?: string): string | undefined {
  if (callFacts({ tool, input }).command !== undefined) return undefined;
  return diff ?? proposedChange(input);
}

export interface CardExtras {
  /** The tool's own preview of its change, when it has one. */
  diff?: string;
  /** What the org policy could not check (Decision.unchecked), said on the card. */
  unchecked?: string;
  /** What the tool's preview says the person should know (git_push: the remote changed). */
  note?: string;
  /** Where the whole change is stored when it is longer than the card shows (a spill). */
  diffRef?: string;
}

export function approvalCard(tool: Tool, input: unknown, reason: string, extras: CardExtras = {}): ApprovalRequest {
  const { diff, unchecked, note, diffRef } = extras;
  const facts = callFacts({ tool, input });
  const card: ApprovalRequest = { tool: tool.name, summary: tool.summarize(input), reason };
  if (facts.command !== undefined) {
    card.command = facts.command;
    const danger = dangerReason(facts.command);
    if (danger) card.destructive = { reason: danger };
  }
  const shown = facts.command === undefined ? (diff !== undefined ? clip(diff) : proposedDiff(input)) : undefined;
  if (shown) card.diff = shown;
  if (shown && diffRef) card.diffRef = diffRef;
  if (facts.urls && facts.urls.length > 0) card.url = facts.urls[0];
  const keys = sessionKeys(facts);
  card.covers = describeKeys(keys);
  card.allows = plainKeys(keys);
  if (unchecked) card.policyUnchecked = unchecked.slice(0, 2000);
  if (note) card.note = note.slice(0, 2000);
  return card;
}
