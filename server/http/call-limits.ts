// How many queries and mutations one caller may have running at once, and waiting behind them,
// so no client can pile up work for the main thread through calls rather than subscriptions: a
// share-link viewer's one WebSocket message carried 200 `turns.earlier` reads of a long session
// and /api/health took 20 s (bounding sockets and subscriptions did not touch it). A viewer
// counts per share link (every viewer of a link shares its places), a person on their own.
// Calls past the running bound wait their turn; past the waiting bound they are refused with
// TOO_MANY_REQUESTS saying why. Subscriptions are bounded per socket (socket-limits.ts).
import { TRPCError } from "@trpc/server";

export const CALL_LIMITS = {
  viewer: { running: 2, waiting: 64 },
  person: { running: 8, waiting: 512 },
};

export type CallLimits = typeof CALL_LIMITS;

/**
 * The largest body of one tRPC call over HTTP (a batch's together), answered PAYLOAD_TOO_LARGE
 * past it. Without it a signed-in person, or a share link's holder, had the server buffer any
 * body whole before its procedure judged it (300 MB took a gigabyte of memory). The largest
 * call the IDE makes fits: a message with 8 images (about 42 MB of base64) or a 20 M-character
 * save written as UTF-8 (JSON escapes, 6 bytes for a control character, can take one past it).
 * The WebSocket's own bound is its maxPayload (app.ts).
 */
export const CALL_BODY_MAX = 64 * 1024 * 1024;

interface Gate {
  running: number;
  queue: Array<() => void>;
}

/** Who is calling, as the bounds count them: a link's viewers together, a person alone. */
export type Caller = { kind: "viewer"; linkId: string } | { kind: "person"; id: string };

export function createCallLimits(limits: CallLimits = CALL_LIMITS) {
  const gates = new Map<string, Gate>();
  return {
    /** Runs `work` once the caller has a place; refuses when too many of its calls already wait. */
    async run<T>(caller: Caller, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      const key = caller.kind === "viewer" ? `link:${caller.linkId}` : `person:${caller.id}`;
      const bound = limits[caller.kind];
      let gate = gates.get(key);
      if (!gate) gates.set(key, (gate = { running: 0, queue: [] }));
      const g = gate;
      if (g.running >= bound.running) {
        if (g.queue.length >= bound.waiting) {
          const who = caller.kind === "viewer" ? "this share link's viewers" : "you";
          throw new TRPCError({
            code: "TOO_MANY_REQUESTS",
            message: `${who} already have ${bound.running} calls running and ${bound.waiting} waiting, the most allowed; wait for them to answer first.`,
          });
        }
        await new Promise<void>((resolve, reject) => {
          const go = () => {
            signal?.removeEventListener("abort", gone);
            resolve();
          };
          // A caller that went away gives its place in the line back.
          const gone = () => {
            const i = g.queue.indexOf(go);
            if (i >= 0) g.queue.splice(i, 1);
            reject(new TRPCError({ code: "CLIENT_CLOSED_REQUEST", message: "the call was abandoned while it waited" }));
          };
          if (signal?.aborted) return gone();
          signal?.addEventListener("abort", gone, { once: true });
          g.queue.push(go);
        });
      } else g.running++;
      try {
        return await work();
      } finally {
        // The place passes straight to the next in line; the count drops only when none waits.
        const next = g.queue.shift();
        if (next) next();
        else if (--g.running === 0) gates.delete(key);
      }
    },
    /** Calls running and waiting for a caller (tests). */
    size(caller: Caller) {
      const g = gates.get(caller.kind === "viewer" ? `link:${caller.linkId}` : `person:${caller.id}`);
      return { running: g?.running ?? 0, waiting: g?.queue.length ?? 0 };
    },
  };
}

export type CallLimiter = ReturnType<typeof createCallLimits>;

const perServer = new WeakMap<object, CallLimiter>();

/** The limiter of one server (keyed by its services object), made on first use. */
export function callLimitsOf(server: object): CallLimiter {
  let l = perServer.get(server);
  if (!l) perServer.set(server, (l = createCallLimits()));
  return l;
}
