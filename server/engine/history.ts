// A session's conversation as stored in Message rows, and the writes that keep it valid: a
// tool call always gets a result (a cancelled or interrupted one gets a result saying so),
// because both providers reject a history with an unanswered call.
import type { Db, TurnRows } from "../db";
import type { ContentBlock, ConversationMessage, Role } from "./types";
import type { ImageData } from "./images";

/** The conversation as the next request sends it, images' bytes filled in. */
export async function loadConversation(
  rows: TurnRows,
  sessionId: string,
  images: ImageData,
): Promise<ConversationMessage[]> {
  return images.fill(sessionId, conversationFrom(await rows.conversation(sessionId)));
}

/**
 * A summary standing for every message stored before it (compact.ts), the one block of a user
 * message. `keep`: how many messages just before it are still sent after it (the message of the
 * turn it was made at the start of); `midTurn`: it was made between two requests of a turn, so
 * the model is asked to go on with the task.
 */
export interface SummaryBlock {
  type: "summary";
  text: string;
  keep: number;
  midTurn: boolean;
}

const isSummary = (content: unknown): content is [SummaryBlock] =>
  Array.isArray(content) && (content[0] as { type?: string } | undefined)?.type === "summary";

/** What the model reads in place of the messages a summary stands for. */
export function summaryPrompt(s: SummaryBlock): string {
  return (
    "This session continues from an earlier conversation that no longer fits in the model's context window. " +
    `A summary of it, written by the assistant:\n\n${s.text}` +
    (s.midTurn ? "\n\nContinue the task from where it stopped." : "")
  );
}

/** Stored rows, in order, as the model is sent them: from the latest summary on, orphaned calls answered. */
export function conversationFrom(stored: { role: string; content: unknown }[]): ConversationMessage[] {
  let rows = stored;
  let head: ConversationMessage | undefined;
  const at = stored.findLastIndex((r) => isSummary(r.content));
  if (at >= 0) {
    const summary = (stored[at].content as [SummaryBlock])[0];
    head = { role: "user", content: [{ type: "text", text: summaryPrompt(summary) }] };
    rows = [...stored.slice(Math.max(0, at - summary.keep), at), ...stored.slice(at + 1)];
  }
  const messages = rows.map((r) => ({ role: r.role as Role, content: r.content as ContentBlock[] }));
  // One user message, not two in a row: the summary and the message it was made in front of.
  if (head && messages[0]?.role === "user")
    messages[0] = { role: "user", content: [...head.content, ...messages[0].content] };
  else if (head) messages.unshift(head);
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
      (messages[i + 1]?.role === "tool" ? messages[i + 1].content : []).flatMap((b) =>
        b.type === "tool_result" ? [b.id] : [],
      ),
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

/** `why`: the result text, the same for every call or one per call id. */
function unanswered(
  m: ConversationMessage,
  answered: Set<string>,
  why: string | ((callId: string) => string),
): ContentBlock[] {
  return m.content.flatMap((b) =>
    b.type === "tool_call" && !answered.has(b.id)
      ? [
          {
            type: "tool_result" as const,
            id: b.id,
            name: b.name,
            content: typeof why === "string" ? why : why(b.id),
            isError: true,
          },
        ]
      : [],
  );
}

/**
 * Persists the tool results missing from a turn's assistant messages, so the stored history is
 * valid as it stands (and the next request's prefix equals what the database says).
 */
export async function closeOpenCalls(
  db: Db,
  sessionId: string,
  turnId: string,
  why: string | ((callId: string) => string),
): Promise<number> {
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
      await db.message.create({
        data: { sessionId, turnId, position: row.position + 1, role: "tool", content: missing as object[] },
      });
    } else {
      // A later message already holds the next position; answering out of place would reorder
      // history, so the load-time repair (answerOrphans) covers this rare case instead.
      continue;
    }
  }
  return added;
}
