// How many calls tRPC sockets may send. tRPC's WebSocket adapter takes an array of calls in one
// message (up to its 4 MiB), and each call costs the main thread its parse, authorization and
// answer, a refused one too: one message of 25,000 subscriptions a second took /api/health from
// 0.2 s to 14–22 s. A message of more calls than a page ever sends at once, or a socket whose
// identity is past its rate (one bucket, refilled every second, for all of a person's sockets, or
// a share link's: 256 sockets each with a rate of its own would multiply it), is ended instead of
// being taken call by call.
import type { WebSocket } from "ws";

export const CALL_BOUNDS = {
  /** The IDE's client sends the calls of one tick in one message: a few, never hundreds. */
  perMessage: 256,
  /** Calls an identity's sockets may send at once, refilled at `perSecond`. */
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

/** Calls an identity's sockets may still send: `take` is false when `calls` more do not fit. */
export class CallBucket {
  private tokens: number;
  private filledAt = Date.now();
  constructor(private readonly bounds = CALL_BOUNDS) {
    this.tokens = bounds.burst;
  }
  take(calls: number): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.bounds.burst, this.tokens + ((now - this.filledAt) / 1000) * this.bounds.perSecond);
    this.filledAt = now;
    if (calls > this.tokens) return false;
    this.tokens -= calls;
    return true;
  }
}

/** One bucket per identity key, kept while a socket of it is open. */
export function createCallBuckets(bounds = CALL_BOUNDS) {
  const held = new Map<string, { bucket: CallBucket; sockets: number }>();
  return {
    hold(key: string): { bucket: CallBucket; release(): void } {
      const entry = held.get(key) ?? { bucket: new CallBucket(bounds), sockets: 0 };
      entry.sockets++;
      held.set(key, entry);
      let released = false;
      return {
        bucket: entry.bucket,
        release() {
          if (released) return;
          released = true;
          if (--entry.sockets === 0) held.delete(key);
        },
      };
    },
  };
}

/** Ends `ws` (with `onCut` told why) when a message carries too many calls, or its bucket is empty. */
export function boundCalls(
  ws: WebSocket,
  bucket: CallBucket,
  onCut: (why: string) => void,
  bounds = CALL_BOUNDS,
): void {
  const emit = ws.emit.bind(ws) as (event: string | symbol, ...args: unknown[]) => boolean;
  ws.emit = ((event: string | symbol, ...args: unknown[]) => {
    if (event !== "message") return emit(event, ...args);
    const calls = callsIn(args[0]);
    const why =
      calls > bounds.perMessage
        ? `${calls} calls in one message, more than ${bounds.perMessage}`
        : !bucket.take(calls)
          ? `more than ${bounds.burst} calls at once, or ${bounds.perSecond} a second, from its sockets together`
          : undefined;
    if (why) {
      onCut(why);
      ws.terminate();
      return false;
    }
    return emit(event, ...args);
  }) as WebSocket["emit"];
}
