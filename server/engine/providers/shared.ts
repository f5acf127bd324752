// Helpers both adapters use to turn the stored conversation into a request deterministically:
// the same stored messages always give the same bytes, which keeps the provider's prompt cache.
import type { ConversationMessage } from "../types";

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
export function argumentsObject(raw: string): Record<string, unknown> {
  try {
    const v = JSON.parse(raw) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
