// The upgrade of /api/trpc to a WebSocket: its identity counted against the sockets it may hold
// (socket-limits.ts), its unsent backlog and the calls it sends bounded (socket-backlog.ts,
// socket-calls.ts), then handed to tRPC's WebSocket server. A refusal is answered in plain HTTP
// (refuseSocket).
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { WebSocketServer } from "ws";
import type { Identity } from "../auth";
import { boundBacklog } from "./socket-backlog";
import { requestAddress } from "./address-key";
import { callerKey } from "./caller-key";
import { boundCalls, createCallBuckets } from "./socket-calls";
import type { SocketLimiter } from "./socket-limits";

export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export function trpcUpgrade(deps: {
  identify(req: IncomingMessage): Promise<Identity>;
  limits: SocketLimiter;
  wss: WebSocketServer;
  log(line: string): void;
}): UpgradeHandler {
  const { limits, wss } = deps;
  const buckets = createCallBuckets();
  return (req, socket, head) =>
    void deps.identify(req).then(
      (id) => {
        const admitted = limits.admit(id, requestAddress(req));
        if ("refused" in admitted) return refuseSocket(socket, 429, "Too Many Requests", admitted.refused);
        wss.handleUpgrade(req, socket, head, (ws) => {
          ws.once("close", admitted.release);
          boundBacklog(ws, (unsent) => deps.log(`a socket that stopped reading was ended (${unsent} bytes unsent)`));
          const calls = buckets.hold(callerKey(id, requestAddress(req)));
          ws.once("close", calls.release);
          boundCalls(ws, calls.bucket, (why) => deps.log(`a socket was ended for sending too many calls: ${why}`));
          wss.emit("connection", ws, req);
        });
        // A handshake that fails never becomes a socket: its place is given back.
        socket.once("close", admitted.release);
      },
      () => refuseSocket(socket, 503, "Service Unavailable", "who is asking could not be checked; try again"),
    );
}

/**
 * Another upgrade (a terminal's) counted against the same bound of sockets per identity as the
 * tRPC ones: each terminal socket is replayed its scrollback and fed the PTY's output, and a
 * person could otherwise open them without end.
 */
export function countedUpgrade(
  deps: { identify(req: IncomingMessage): Promise<Identity>; limits: SocketLimiter },
  handler: UpgradeHandler,
): UpgradeHandler {
  return (req, socket, head) =>
    void deps.identify(req).then(
      (id) => {
        const admitted = deps.limits.admit(id, requestAddress(req));
        if ("refused" in admitted) return refuseSocket(socket, 429, "Too Many Requests", admitted.refused);
        socket.once("close", admitted.release);
        handler(req, socket, head);
      },
      () => refuseSocket(socket, 503, "Service Unavailable", "who is asking could not be checked; try again"),
    );
}

/** An upgrade answered in plain HTTP and closed: no WebSocket is left waiting for an answer. */
export function refuseSocket(socket: Duplex, status: number, reason: string, text: string): void {
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  socket.once("finish", () => socket.destroy());
}
