// How many tRPC WebSockets one identity may hold open and how many event subscriptions one
// socket may carry, so no client can pile up work the main thread must do for it (10,000
// subscriptions on one socket once took /api/health out for 95 s). A share-link viewer counts
// per link and per address; the owner on its own. The excess is refused: a socket at its
// upgrade (HTTP 429), a subscription with TOO_MANY_REQUESTS, each with a message saying which
// bound it met.
import type { Identity } from "../auth";

export const SOCKET_LIMITS = {
  subscriptionsPerSocket: 64,
  viewerSocketsPerAddress: 32,
  viewerSocketsPerLink: 128,
  ownerSockets: 256,
};

export type SocketLimits = typeof SOCKET_LIMITS;

/** A socket's own count of open subscriptions (kept in its tRPC context). */
export interface ConnectionCount {
  subscriptions: number;
  limit: number;
  /** False while the socket has more than BACKLOG_BYTES unsent: replays wait for it. */
  ready(): boolean;
  /** False once the socket is closing: its person was signed out or lost access (the raw socket
   *  was ended, auth/accounts/sockets.ts) or it was closed; no further call on it is taken. */
  open(): boolean;
}

export const BACKLOG_BYTES = 256 * 1024;
/** WebSocket.OPEN. */
const WS_OPEN = 1;

export function createSocketLimits(limits: SocketLimits = SOCKET_LIMITS) {
  const open = new Map<string, number>();
  const bounds = (id: Identity, address: string): Array<[string, number, string]> => {
    if (id.kind === "viewer")
      return [
        [`link:${id.linkId}`, limits.viewerSocketsPerLink, "this share link"],
        [`address:${address}`, limits.viewerSocketsPerAddress, `share-link viewers at ${address}`],
      ];
    // With accounts each person has the owner's bound of their own.
    if (id.kind === "owner")
      return id.via === "account"
        ? [[`person:${id.actor.userId}`, limits.ownerSockets, "this person"]]
        : [["owner", limits.ownerSockets, "the owner"]];
    return [];
  };
  return {
    /** A release for a socket that may open, or the reason it may not. */
    admit(id: Identity, address: string): { release(): void } | { refused: string } {
      const keys = bounds(id, address);
      for (const [key, max, who] of keys) {
        if ((open.get(key) ?? 0) >= max)
          return {
            refused: `too many connections: ${who} already holds ${max} open, the most allowed; close some first`,
          };
      }
      for (const [key] of keys) open.set(key, (open.get(key) ?? 0) + 1);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          for (const [key] of keys) {
            const n = (open.get(key) ?? 1) - 1;
            if (n <= 0) open.delete(key);
            else open.set(key, n);
          }
        },
      };
    },
    /** `socket`: the raw socket under `ws` (ending it is how a person's access ends). */
    connection: (
      ws: { bufferedAmount: number; readyState: number },
      socket?: { writableEnded: boolean; destroyed: boolean },
    ): ConnectionCount => ({
      subscriptions: 0,
      limit: limits.subscriptionsPerSocket,
      ready: () => ws.bufferedAmount < BACKLOG_BYTES,
      open: () => ws.readyState === WS_OPEN && !socket?.writableEnded && !socket?.destroyed,
    }),
    /** Open sockets per key (tests). */
    size: (key: string) => open.get(key) ?? 0,
  };
}

export type SocketLimiter = ReturnType<typeof createSocketLimits>;
