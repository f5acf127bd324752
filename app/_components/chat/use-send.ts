"use client";
// What Enter (or Send) does with the message box: sends it when no turn runs, queues it while
// one does (message-queue.tsx). "A turn runs" is what the events say, and also, before they
// say it, a send still on its way or a turn the server has started whose events have not
// arrived yet: the send's answer and the session's events come on different connections, in
// no set order. A send the server refuses because a turn runs (one this page did not know of)
// goes to the queue too. A message is never dropped: the box is emptied only once the server
// took the message or the queue holds it, and only if the person has not changed it meanwhile.
import { useRef, useState } from "react";
import type { SessionState } from "../../_lib/session-state";
import { useSessionApi } from "../../_lib/session-api";
import type { SendImage } from "../../../server/protocol/attachments";
import { toSend, type DraftImage } from "./attachments";
import { useMessageQueue } from "./message-queue";

export interface SendInputs {
  sessionId: string;
  state: SessionState;
  draft: string;
  setDraft(update: (draft: string) => string): void;
  attached: { images: DraftImage[]; reading: boolean; remove(key: string): void };
  /** The server took a message (and may have named the session after it). */
  onSent?(): void;
}

/** The server's answer to a send while a turn runs (server/api/routers/turns.ts, busy). */
export const refusedBusy = (err: unknown): boolean =>
  (err as { data?: { code?: string } } | undefined)?.data?.code === "CONFLICT";

/** Whether a turn runs or is about to: the events' active turn, a send on its way, or the turn
 *  a send started that the events have not shown yet. */
export function turnBusy(
  state: Pick<SessionState, "activeTurnId" | "turns">,
  posting: number,
  started: string | undefined,
): boolean {
  return state.activeTurnId !== null || posting > 0 || (started !== undefined && !state.turns[started]);
}

export function useSend({ sessionId, state, draft, setDraft, attached, onSent }: SendInputs) {
  const api = useSessionApi();
  const [error, setError] = useState<string>();
  const [posting, setPosting] = useState(0);
  // The turn the latest send started, until the events show it (per session: the pane may stay).
  const [started, setStarted] = useState<{ sessionId: string; turnId: string }>();
  // The box's text while it is on its way: a second Enter on it must not send or queue it again.
  const onItsWay = useRef<string | undefined>(undefined);
  const busy = turnBusy(state, posting, started?.sessionId === sessionId ? started.turnId : undefined);

  // `quietBusy`: a refusal because a turn runs is the caller's to handle (it queues the message).
  const post = (text: string, images?: SendImage[], quietBusy = true) => {
    setError(undefined);
    setPosting((n) => n + 1);
    return api
      .send(sessionId, text, images)
      .then(
        (sent) => {
          const turnId = (sent as { turnId?: unknown } | undefined)?.turnId;
          if (typeof turnId === "string") setStarted({ sessionId, turnId });
          onSent?.();
        },
        (err: Error) => {
          if (!quietBusy || !refusedBusy(err)) setError(err.message);
          throw err;
        },
      )
      .finally(() => setPosting((n) => n - 1));
  };

  const lastEnd = state.items.findLast((i) => i.kind === "turn-end");
  const queue = useMessageQueue({
    running: busy,
    lastEnd:
      lastEnd?.kind === "turn-end"
        ? { key: lastEnd.key, status: state.turns[lastEnd.turnId]?.status ?? "completed" }
        : undefined,
    post: (m) => post(m.text, toSend(m.images)),
  });

  // A message may be images alone.
  const canSend = (draft.trim() !== "" || attached.images.length > 0) && !attached.reading;
  /** The box, emptied of `typed` and its images unless the person changed it meanwhile. */
  const taken = (typed: string, images: DraftImage[]) => {
    setDraft((d) => (d === typed ? "" : d));
    // Images added while it was sending stay for the next message.
    for (const img of images) attached.remove(img.key);
  };
  const send = () => {
    // The turn the server says runs ends after this one (the last this page had seen end).
    const after = lastEnd?.key;
    const typed = draft;
    const images = attached.images;
    onItsWay.current = typed;
    post(typed.trim(), toSend(images))
      .then(
        () => taken(typed, images),
        (err: unknown) => {
          // Otherwise it stays in the box, with the error shown.
          if (!refusedBusy(err)) return;
          queue.later({ text: typed.trim(), images }, after);
          taken(typed, images);
        },
      )
      .finally(() => {
        if (onItsWay.current === typed) onItsWay.current = undefined;
      });
  };
  /** Enter or Send: sends the box, or queues it while a turn runs. */
  const submit = () => {
    if (!canSend || (posting > 0 && onItsWay.current === draft)) return;
    if (!busy) return send();
    queue.add({ text: draft.trim(), images: attached.images });
    taken(draft, attached.images);
  };
  const resend = (text: string, images?: SendImage[]) => void post(text, images, false).catch(() => undefined);

  return { busy, error, canSend, submit, resend, queue };
}
