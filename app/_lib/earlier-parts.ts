// "Show earlier" for a turn longer than the server reads in one answer (server/hub/history.ts):
// the server gives it in parts, latest first, each marked `partial`, and the IDE asks on until
// an answer starts at a turn, then puts the joined window in front of the chat at once
// (session-state.ts `prependEarlier` takes whole turns only). Each part is folded on its own,
// so a run of deltas cut between two parts is folded again where they meet: the chat is the
// same, item keys included, as if the turn had come in one answer.
import type { SessionEvent } from "../../server/protocol/events";
import type { EarlierWindow } from "./session-state";

type Run = Extract<SessionEvent, { type: "text.delta" | "reasoning.delta" | "tool.progress" }>;

/** Whether `next` continues the run of deltas `ev` ends (server/hub/coalesce.ts's rule). */
function continues(ev: SessionEvent, next: SessionEvent): boolean {
  if (ev.type !== next.type) return false;
  if (ev.type === "tool.progress") return ev.callId === (next as typeof ev).callId;
  if (ev.type === "text.delta" || ev.type === "reasoning.delta") return ev.turnId === (next as typeof ev).turnId;
  return false;
}

/** Parts of a window, earliest first, as one list of events. */
export function joinParts(parts: readonly (readonly SessionEvent[])[]): SessionEvent[] {
  const out: SessionEvent[] = [];
  for (const part of parts) {
    const last = out.at(-1);
    const first = part[0];
    if (last && first && continues(last, first)) {
      const run = { ...last, seq: first.seq, at: first.at } as Run;
      if (run.type === "tool.progress") run.chunk += (first as Run & { chunk: string }).chunk;
      else run.text += (first as Run & { text: string }).text;
      out[out.length - 1] = run;
      out.push(...part.slice(1));
    } else out.push(...part);
  }
  return out;
}

/** The window before `beforeSeq`, its parts read and joined when the server gives it in parts. */
export async function readEarlier(
  read: (beforeSeq: number) => Promise<EarlierWindow>,
  beforeSeq: number,
): Promise<EarlierWindow> {
  const parts: (readonly SessionEvent[])[] = [];
  for (let before = beforeSeq; ;) {
    const w = await read(before);
    parts.unshift(w.events);
    if (!w.partial) return { ...w, events: joinParts(parts) };
    // A part always holds an event: an answer that did not move back is not one to follow.
    if (w.afterSeq >= before) throw new Error("The server gave no earlier part of this turn.");
    before = w.afterSeq;
  }
}
