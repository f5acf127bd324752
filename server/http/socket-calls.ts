// How many calls one tRPC socket may send. tRPC's WebSocket adapter takes an array of calls in
// one message (up to its 4 MiB), and each call costs the main thread its parse, authorization and
// answer, a refused one too: one message of 25,000 subscriptions a second took /api/health from
// 0.2 s to 14–22 s. A message of more calls than a page ever sends at once, or a socket past its
// rate (a bucket refilled every second), is ended instead of being taken call by call.
import type { WebSocket } from "ws";

export const CALL_BOUNDS = {
  /** The IDE's client sends the calls of one tick in one message: a few, never hundreds. */
  perMessage: 256,
  /** Calls a socket may send at once, refilled at `perSecond`. */
  burst: 1_000,
  perSecond: 200,
};

/** Calls in a raw message: an array's length, else one (a single call, or a keep-alive's PONG). */
function callsIn(data: unknown): number {
  const text = Buffer.isBuffer(data)
    ? data.toString("utf8")
    : Array.isArray(data)
      ? Buffer.concat(data).toString("utf8")
      : String(data);
  if (!text.trimStart().startsWith("[")) return 1;
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.length : 1;
  } catch {
    return 1;
  }
}

/** Ends `ws` (with `onCut` told why) when a message carries, or the socket sends, too many calls. */
export function boundCalls(ws: WebSocket, onCut: (why: string) => void, bounds = CALL_BOUNDS): void {
  let tokens = bounds.burst;
  let filledAt = Date.now();
  const emit = ws.emit.bind(ws) as (event: string | symbol, ...args: unknown[]) => boolean;
  ws.emit = ((event: string | symbol, ...args: unknown[]) => {
    if (event !== "message") return emit(event, ...args);
    const now = Date.now();
    tokens = Math.min(bounds.burst, tokens + ((now - filledAt) / 1000) * bounds.perSecond);
    filledAt = now;
    const calls = callsIn(args[0]);
    const why =
      calls > bounds.perMessage
        ? `${calls} calls in one message, more than ${bounds.perMessage}`
        : calls > tokens
          ? `more than ${bounds.burst} calls at once, or ${bounds.perSecond} a second`
          : undefined;
    if (why) {
      onCut(why);
      ws.terminate();
      return false;
    }
    tokens -= calls;
    return emit(event, ...args);
  }) as WebSocket["emit"];
}
