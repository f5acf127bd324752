// Noticing that a page left while its terminal socket is not being read. A socket is paused while
// the program does not read its input (backpressure: the rest waits in the page's TCP) or while
// an interrupt key is judged, and a socket that is not read never sees its page's close frame or
// its FIN, which wait behind the input. Without this a terminal whose program never reads again
// stays "shown" for good: its idle limit never starts and the runner can never reclaim it.
// Writing does notice: the kernel answers a write to a connection its peer has closed with a
// reset, the next write fails, and ws closes the socket, which detaches it as any close does.
// So each paused socket is pinged now and then; one whose page is there takes the ping in stride.
import type { WebSocket } from "ws";

/** Pings each paused socket of `sockets()` every `everyMs`; returns the stop. */
export function probePausedSockets(sockets: () => Iterable<WebSocket>, everyMs: number): () => void {
  const timer = setInterval(() => {
    for (const ws of sockets()) if (ws.isPaused && ws.readyState === ws.OPEN) ws.ping(undefined, undefined, () => {}); // a failure closes it
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
