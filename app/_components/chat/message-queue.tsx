"use client";
// Messages written while the agent works: Enter queues them above the message box, and each is
// sent when the turn before it has completed, one turn each, in order. After a turn that
// failed or was stopped they wait: the person may not want them any more. Each can be sent at
// once or dropped. A message keeps the images attached to it. The queue lives in this tab (a
// reload forgets it).
import { useEffect, useRef, useState } from "react";
import type { DraftImage } from "./attachments";
import { DraftThumbs } from "./composer-images";
import styles from "./chat.module.css";

export interface QueuedMessage {
  text: string;
  images: DraftImage[];
}

export interface QueueInputs {
  running: boolean;
  /** The key and status of the session's last finished turn (none: no turn has finished). */
  lastEnd?: { key: string; status: string };
  post(message: QueuedMessage): Promise<void>;
}

export function useMessageQueue({ running, lastEnd, post }: QueueInputs) {
  const [queued, setQueued] = useState<QueuedMessage[]>([]);
  // The turn end a queued message was last sent after: the next one waits for a newer end.
  const sentAfter = useRef<string | undefined>(undefined);
  const [sending, setSending] = useState(false);

  const sendFirst = (message: QueuedMessage) => {
    setSending(true);
    sentAfter.current = lastEnd?.key;
    setQueued((q) => q.slice(1));
    post(message).then(
      () => setSending(false),
      () => {
        // Back at the head, held until the person sends it: the error is shown by `post`.
        setQueued((q) => [message, ...q]);
        setSending(false);
      },
    );
  };

  const ready = !running && !sending && lastEnd?.status === "completed" && lastEnd.key !== sentAfter.current;
  useEffect(() => {
    if (ready && queued.length > 0) sendFirst(queued[0]);
    // sendFirst is recreated each render; what decides is captured in `ready` and the queue.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [ready, queued]);

  return {
    queued,
    add: (message: QueuedMessage) => setQueued((q) => [...q, message]),
    /** Queues one the server refused because a turn runs that this page had not seen start:
     *  it waits for a turn to end after `after`, the last end seen when it was sent. */
    later: (message: QueuedMessage, after: string | undefined) => {
      sentAfter.current = after;
      setQueued((q) => [...q, message]);
    },
    remove: (i: number) => setQueued((q) => q.filter((_, j) => j !== i)),
    /** Sends one now, when no turn runs. */
    sendNow: (i: number) => {
      if (running || sending) return;
      const message = queued[i];
      setQueued((q) => [message, ...q.filter((_, j) => j !== i)]);
      sendFirst(message);
    },
    held: !running && !sending && queued.length > 0 && lastEnd !== undefined && lastEnd.status !== "completed",
  };
}

export function QueuedMessages({ queue, running }: { queue: ReturnType<typeof useMessageQueue>; running: boolean }) {
  if (queue.queued.length === 0) return null;
  return (
    <div className={styles.queue} data-testid="message-queue">
      <div className={styles.queueNote}>
        {queue.held
          ? "Held: the last turn did not complete. Send them or drop them."
          : "Sent when the agent finishes, in order:"}
      </div>
      {queue.queued.map(({ text, images }, i) => (
        <div key={`${i}-${text}-${images.length}`} className={styles.queued} data-testid="queued-message">
          <DraftThumbs images={images} />
          <span data-testid="queued-text">{text}</span>
          {!running && (
            <button onClick={() => queue.sendNow(i)} data-testid="queued-send">
              Send
            </button>
          )}
          <button
            onClick={() => queue.remove(i)}
            title="Drop this message"
            aria-label="Drop this message"
            data-testid="queued-drop"
          >
            ✕
          </button>
        </div>
      ))}
    </div>
  );
}
