// What an approval card shows: the tool, a one-line summary, the exact command, diff or URL,
// why it needs approval, whether the command is destructive (and what it could destroy), and
// what "for this session" would cover, in plain sentences. Built from the exact input
// the approval is bound to.
import { createTwoFilesPatch } from "diff";
import type { ApprovalRequest } from "../protocol/events";
import type { Tool } from "../tools/tool";
import { callFacts } from "../policy/decide";
import { describeKeys, plainKeys, sessionKeys } from "../policy/fingerprint";
import { dangerReason } from "../shell/danger";

const MAX_DIFF = 20_000;

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

/** A unified diff of the change an edit or write proposes, when the input describes one. */
export function proposedDiff(input: unknown): string | undefined {
  const given = str(input, "diff", "patch");
  if (given) return clip(given);
  const path = str(input, "path", "file_path") ?? "file";
  const oldStr = str(input, "old_str", "old_string");
  const newStr = str(input, "new_str", "new_string");
  if (oldStr !== undefined && newStr !== undefined) {
    return clip(patch(`a/${path}`, `b/${path}`, `${oldStr}\n`, `${newStr}\n`, undefined, undefined, { context: 2 }));
  }
  const content = str(input, "content");
  if (content !== undefined)
    return clip(patch("/dev/null", `b/${path}`, "", content.endsWith("\n") ? content : `${content}\n`));
  return undefined;
}

/** `diff`: the tool's own preview of its change (the file's real lines), when it has one. */
/** `unchecked`: what the org policy could not check (Decision.unchecked), said on the card. */
/** `note`: what the tool's preview says the person should know (git_push: the remote changed). */
export function approvalCard(
  tool: Tool,
  input: unknown,
  reason: string,
  diff?: string,
  unchecked?: string,
  note?: string,
): ApprovalRequest {
  const facts = callFacts({ tool, input });
  const card: ApprovalRequest = { tool: tool.name, summary: tool.summarize(input), reason };
  if (facts.command !== undefined) {
    card.command = facts.command;
    const danger = dangerReason(facts.command);
    if (danger) card.destructive = { reason: danger };
  }
  const shown = facts.command === undefined ? (diff !== undefined ? clip(diff) : proposedDiff(input)) : undefined;
  if (shown) card.diff = shown;
  if (facts.urls && facts.urls.length > 0) card.url = facts.urls[0];
  const keys = sessionKeys(facts);
  card.covers = describeKeys(keys);
  card.allows = plainKeys(keys);
  if (unchecked) card.policyUnchecked = unchecked.slice(0, 2000);
  if (note) card.note = note.slice(0, 2000);
  return card;
}
