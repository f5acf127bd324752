// Runs of stored deltas folded into one event each, for a subscriber that rebuilds a session
// rather than replays it (the IDE): a long session's log is mostly text, reasoning and output
// deltas, a hundred thousand events where the folded replay is a few thousand. A folded event
// carries the last seq of its run, so resuming after it misses nothing and repeats nothing.
import type { SessionEvent } from "../protocol/events";

type Foldable = Extract<SessionEvent, { type: "text.delta" | "reasoning.delta" | "tool.progress" }>;

/** Whether `next` continues the run `ev` belongs to (same kind of delta, same turn or call). */
function continues(ev: SessionEvent, next: SessionEvent): boolean {
  if (ev.type !== next.type) return false;
  switch (ev.type) {
    case "text.delta":
    case "reasoning.delta":
      return ev.turnId === (next as typeof ev).turnId;
    case "tool.progress":
      return ev.callId === (next as typeof ev).callId;
    default:
      return false;
  }
}

export function coalesce(events: SessionEvent[]): SessionEvent[] {
  const out: SessionEvent[] = [];
  // The last event out is a copy this function made (the page's own objects are not changed).
  let copied = false;
  for (const ev of events) {
    const last = out.at(-1);
    if (!last || !continues(last, ev)) {
      out.push(ev);
      copied = false;
      continue;
    }
    const run = (copied ? last : { ...last }) as Foldable;
    copied = true;
    if (run.type === "tool.progress") run.chunk += (ev as typeof run).chunk;
    else run.text += (ev as typeof run).text;
    run.seq = ev.seq;
    run.at = ev.at;
    out[out.length - 1] = run;
  }
  return out;
}
