// Telling the model the session's mode without touching the cached prompt prefix. The system
// prompt and the tool list never change with the mode; instead, when the mode differs from the
// last one the conversation told (none told: ask, today's behaviour, so a session that never
// switches is sent exactly what it was before modes), a one-line note is appended to the newest
// user-side message (the person's message, or the last tool result of the step before) and
// stored with it, so every later request repeats the same bytes. Only the tail changes.
// The told mode is read back from the stored notes; a tool output made to end like a note can at
// worst keep a note from being sent: what runs is decided by the pipeline, never by this text.
import type { Db, DbProvider } from "../db";
import { MODES, type Mode } from "../policy/modes";
import { modeFor } from "../services/session-modes";
import type { ContentBlock, ConversationMessage } from "./types";

const TEXT: Record<Mode, string> = {
  plan: "Plan mode is on: only read-only tools run (edits and commands are refused). Read and search the workspace, then call exit_plan_mode with your plan.",
  ask: "Ask mode is on: edits and commands run once the person approves them.",
  "accept-edits":
    "Accept-edits mode is on: file edits in the workspace run without asking; commands and network access still ask.",
  auto: "Auto mode is on: every call the org policy allows runs without asking.",
};

export function modeNote(mode: Mode): string {
  return `\n\n[Session mode: ${mode}] ${TEXT[mode]}`;
}

// At the end of a tool result, or a text block of its own in the person's message.
const NOTE_AT_END = new RegExp(`(?:^|\\n\\n)\\[Session mode: (${MODES.join("|")})\\] [^\\n]*$`);

function tailText(content: readonly ContentBlock[]): string | undefined {
  const last = content[content.length - 1];
  if (!last) return undefined;
  if (last.type === "text") return last.text;
  if (last.type === "tool_result") return last.content;
  return undefined;
}

/** The mode the conversation last told the model (ask when none was told). */
export function toldMode(messages: readonly ConversationMessage[]): Mode {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === "assistant") continue;
    const found = NOTE_AT_END.exec(tailText(m.content) ?? "");
    if (found) return found[1] as Mode;
  }
  return "ask";
}

/** `content` with the note at its end: a text block for the person's message, inside the last tool result otherwise. */
export function withNote(content: readonly ContentBlock[], note: string): ContentBlock[] | undefined {
  const last = content[content.length - 1];
  if (!last) return undefined;
  if (last.type === "tool_result") return [...content.slice(0, -1), { ...last, content: `${last.content}${note}` }];
  if (content.some((b) => b.type === "tool_result")) return undefined;
  return [...content, { type: "text", text: note.trimStart() }];
}

/**
 * Before a request: appends the note to the newest message (in `messages` and its stored row)
 * when the session's mode is not the one last told. Returns the messages to send.
 */
export async function announceMode(
  db: Db,
  sessionId: string,
  messages: ConversationMessage[],
  /** The database's, for the mode read through plain SQL (session-modes.ts). */
  provider?: DbProvider,
): Promise<ConversationMessage[]> {
  const last = messages[messages.length - 1];
  if (!last || last.role === "assistant") return messages;
  const info = await modeFor(db, sessionId, undefined, provider);
  if (!info || info.mode === toldMode(messages)) return messages;
  const note = modeNote(info.mode);
  const row = await db.message.findFirst({
    where: { sessionId },
    orderBy: { position: "desc" },
    select: { id: true, role: true, content: true },
  });
  // Only a row the request ends with (not a summary, not a synthetic answer to an open call).
  if (!row || row.role !== last.role || !Array.isArray(row.content)) return messages;
  const stored = row.content as unknown as ContentBlock[];
  if ((stored[0] as { type?: string } | undefined)?.type === "summary") return messages;
  const next = withNote(stored, note);
  const sent = withNote(last.content, note);
  if (!next || !sent) return messages;
  await db.message.update({ where: { id: row.id }, data: { content: next as object[] } });
  return [...messages.slice(0, -1), { role: last.role, content: sent }];
}
