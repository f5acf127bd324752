// Runner authentication on the WebSocket upgrade: a Bearer token compared in constant time
// against every accepted token, refused with a plain HTTP answer before any WebSocket exists.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** A matcher over the accepted tokens. Hashing first makes every comparison the same length. */
export function tokenMatcher(tokens: readonly string[]): (presented: string) => boolean {
  const accepted = tokens.filter((t) => t.length > 0).map(digest);
  return (presented) => {
    const d = digest(presented);
    let ok = false;
    for (const a of accepted) ok = timingSafeEqual(a, d) || ok;
    return ok;
  };
}

/** A runner token that may connect only as one runner id, which no other token may claim. */
export interface BoundToken {
  token: string;
  runnerId: string;
}

/**
 * Which accepted token `presented` is (its index in `tokens`), or -1; every token is compared,
 * in constant time, whichever matches.
 */
export function tokenIndexer(tokens: readonly (string | BoundToken)[]): (presented: string) => number {
  const accepted = tokens
    .map((t) => (typeof t === "string" ? t : t.token))
    .map((t) => (t.length > 0 ? digest(t) : null));
  return (presented) => {
    const d = digest(presented);
    let found = -1;
    accepted.forEach((a, i) => {
      if (a && timingSafeEqual(a, d) && found < 0) found = i;
    });
    return found;
  };
}

export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (typeof header !== "string") return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

export function refuseUpgrade(socket: Duplex, status: 401 | 400 | 429 | 503, text: string, headers = ""): void {
  const reason = { 400: "Bad Request", 401: "Unauthorized", 429: "Too Many Requests", 503: "Service Unavailable" }[
    status
  ];
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      (status === 401 ? 'WWW-Authenticate: Bearer realm="quiver-runner"\r\n' : "") +
      headers +
      `\r\n${body}`,
  );
}
