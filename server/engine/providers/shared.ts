// Helpers both adapters use to turn the stored conversation into a request deterministically:
// the same stored messages always give the same bytes, which keeps the provider's prompt cache.
import type { ConversationMessage } from "../types";
import { parseArguments } from "../../tools/repair/arguments";

/** Tool results and user text are both "user" on the wire; adjacent ones become one message. */
export function mergeSameRole(messages: ConversationMessage[]): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  for (const m of messages) {
    const wire = m.role === "tool" ? "user" : m.role;
    const prev = out.at(-1);
    const prevWire = prev ? (prev.role === "tool" ? "user" : prev.role) : undefined;
    if (prev && prevWire === wire) out[out.length - 1] = { role: prev.role, content: [...prev.content, ...m.content] };
    else out.push({ role: m.role, content: [...m.content] });
  }
  return out;
}

/**
 * Anthropic needs tool_use.input as an object. Damaged arguments were already answered with
 * an error result by the pipeline, so replaying them as `{}` keeps the history valid.
 */
/**
 * A stored call's arguments as the history replays them: through the same repair ladder the
 * pipeline ran the call with (tools/repair), so a repaired call shows the model the arguments it
 * ran with, not `{}`; only what the ladder cannot repair goes back as `{}`.
 */
export function argumentsObject(raw: string): Record<string, unknown> {
  const r = parseArguments(raw);
  return r.ok ? r.value : {};
}
