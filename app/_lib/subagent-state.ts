// A subagent (the task tool) in the chat's state: its calls (tool.started with parentCallId) are
// kept as cards of their own but listed inside the task call's card, not in the timeline, and
// its streamed text (the task call's tool.progress) is kept in order between them, so its card
// shows what it said and did as it happened, live and in a replay alike.
import type { SessionState, ToolCard } from "./session-state";

export type SubItem = { kind: "text"; text: string } | { kind: "tool"; callId: string };

/** Text kept per subagent, from the end (its report is the task call's own output). */
export const SUB_TEXT_CAP = 64 * 1024;

export const TASK_TOOL = "task";

/** `card` (a subagent's call) filed under its task call's card. */
export function nestCall(s: SessionState, parentCallId: string, card: ToolCard): SessionState {
  const parent = s.tools[parentCallId];
  const sub: SubItem[] = [...(parent.sub ?? []), { kind: "tool", callId: card.callId }];
  return { ...s, tools: { ...s.tools, [card.callId]: card, [parentCallId]: { ...parent, sub } } };
}

/** A task call's progress is its subagent's text: appended to the subagent's items. */
export function subProgress(card: ToolCard, chunk: string): { sub?: SubItem[] } {
  if (card.name !== TASK_TOOL) return {};
  const sub = [...(card.sub ?? [])];
  const last = sub.at(-1);
  if (last?.kind === "text") sub[sub.length - 1] = { kind: "text", text: (last.text + chunk).slice(-SUB_TEXT_CAP) };
  else if (chunk.trim()) sub.push({ kind: "text", text: chunk.slice(-SUB_TEXT_CAP) });
  return { sub };
}
