// A session's conversation as stored in Message rows, and the writes that keep it valid: a
// tool call always gets a result (a cancelled or interrupted one gets a result saying so),
// because both providers reject a history with an unanswered call.
import type { Db, TurnRows } from "../db";
import type { ContentBlock, ConversationMessage, Role } from "./types";

export async function loadConversation(rows: TurnRows, sessionId: string): Promise<ConversationMessage[]> {
  const messages = (await rows.conversation(sessionId)).map((r) => ({ role: r.role as Role, content: r.content as ContentBlock[] }));
  return answerOrphans(messages, "No result was recorded for this call.");
}

/** Inserts a result after any assistant message whose calls were left unanswered. */
export function answerOrphans(messages: ConversationMessage[], why: string): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    out.push(m);
    if (m.role !== "assistant") continue;
    const answered = new Set(
      (messages[i + 1]?.role === "tool" ? messages[i + 1].content : []).flatMap((b) => (b.type === "tool_result" ? [b.id] : [])),
    );
    const missing = unanswered(m, answered, why);
    if (missing.length === 0) continue;
    if (messages[i + 1]?.role === "tool") {
      messages[i + 1] = { role: "tool", content: [...messages[i + 1].content, ...missing] };
    } else {
      out.push({ role: "tool", content: missing });
    }
  }
  return out;
}

function unanswered(m: ConversationMessage, answered: Set<string>, why: string): ContentBlock[] {
  return m.content.flatMap((b) =>
    b.type === "tool_call" && !answered.has(b.id) ? [{ type: "tool_result" as const, id: b.id, name: b.name, content: why, isError: true }] : [],
  );
}

/**
 * Persists the tool results missing from a turn's assistant messages, so the stored history is
 * valid as it stands (and the next request's prefix equals what the database says).
 */
export async function closeOpenCalls(db: Db, sessionId: string, turnId: string, why: string): Promise<number> {
  const rows = await db.message.findMany({ where: { sessionId }, orderBy: { position: "asc" } });
  let added = 0;
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    if (row.role !== "assistant" || row.turnId !== turnId) continue;
    const next = rows[i + 1];
    const nextBlocks = next?.role === "tool" ? (next.content as unknown as ContentBlock[]) : [];
    const answered = new Set(nextBlocks.flatMap((b) => (b.type === "tool_result" ? [b.id] : [])));
    const missing = unanswered({ role: "assistant", content: row.content as unknown as ContentBlock[] }, answered, why);
    if (missing.length === 0) continue;
    added += missing.length;
    if (next?.role === "tool") {
      await db.message.update({ where: { id: next.id }, data: { content: [...nextBlocks, ...missing] as object[] } });
    } else if (!next) {
      await db.message.create({ data: { sessionId, turnId, position: row.position + 1, role: "tool", content: missing as object[] } });
    } else {
      // A later message already holds the next position; answering out of place would reorder
      // history, so the load-time repair (answerOrphans) covers this rare case instead.
      continue;
    }
  }
  return added;
}
