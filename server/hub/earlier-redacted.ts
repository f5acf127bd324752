// A share-link viewer's "show earlier" (turns.earlier): the answer redacted as part of the
// streams it was cut from, not on its own. A window of whole turns starts and ends where no
// stream is open; a part of a turn over the budget (history.ts) is cut inside its streams, and
// a secret across the cut would be half in each answer, found in neither. So the turn's events
// either side of the cut, more than any secret, are redacted with it and then left out: each
// answer drops its share of a secret it holds, whichever side its stand-in went to.
import { redactEventList } from "../auth/redact-stream";
import type { EarlierWindow, SessionHistory } from "./history";

export async function redactedEarlier(
  history: SessionHistory,
  sessionId: string,
  beforeSeq: number,
  turns: number,
): Promise<EarlierWindow> {
  const window = await history.earlier(sessionId, beforeSeq, turns);
  const { before, after } = await history.around(sessionId, window, beforeSeq);
  const events = redactEventList([...before, ...window.events, ...after]).filter(
    (ev) => ev.seq > window.afterSeq && ev.seq <= beforeSeq,
  );
  return { ...window, events };
}
