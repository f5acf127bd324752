// A tRPC socket's unsent bytes, bounded. Live events go to a subscriber as they come (only a
// replay waits for the socket's backlog to drain, socket-limits.ts ready()), so a client that
// stops reading, while its keep-alive still answers, made the server hold every event of every
// turn for it: one share-link viewer's socket held 2.8 GB of heap through a 100,000-token turn.
// Past the bound the socket is ended; the IDE's client opens a new one and resumes from the
// last event it has (a replay, which waits for the client to read).
import type { WebSocket } from "ws";

/** Far above what a reading client ever has queued (a replay pauses at 256 KiB). */
export const MAX_UNSENT_BYTES = 16 * 1024 * 1024;

/** Ends `ws` (with `onCut` told how much was waiting) when a send leaves more than `max` unsent. */
export function boundBacklog(ws: WebSocket, onCut: (unsent: number) => void, max = MAX_UNSENT_BYTES): void {
  const send = ws.send.bind(ws) as (...args: unknown[]) => void;
  let cut = false;
  ws.send = ((...args: unknown[]) => {
    send(...args);
    if (cut || ws.bufferedAmount <= max) return;
    cut = true;
    onCut(ws.bufferedAmount);
    ws.terminate();
  }) as WebSocket["send"];
}
