// Who a request is. In order:
//  1. a signed viewer cookie (set by a share link) makes it a viewer of exactly that session,
//     even from loopback; if the link was revoked or has expired the request is refused
//     ("ended"), never quietly promoted to the owner;
//  2. a request from loopback that did not come through a proxy is the local owner (embedded
//     `npm start` needs no sign-in);
//  3. a signed owner cookie (set by the sign-in URL) is the owner;
//  4. anything else is anonymous.
import type { IncomingMessage } from "node:http";
import type { Actor } from "../services/types";
import type { ShareService } from "../services/shares";
import { OWNER_COOKIE, VIEWER_COOKIE, readCookie } from "./cookies";
import { verify } from "./crypto";

export type Identity =
  | { kind: "owner"; actor: Actor; via: "loopback" | "cookie" }
  | { kind: "viewer"; sessionId: string; linkId: string; expiresAt: Date | null }
  | { kind: "ended"; sessionId: string; reason: "unknown" | "expired" | "revoked" }
  | { kind: "anonymous" };

const PROXY_HEADERS = ["forwarded", "x-forwarded-for", "x-real-ip"];

export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.startsWith("::ffff:") ? address.slice(7) : address;
  return a === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** From this machine, directly: a reverse proxy on loopback forwards strangers, so it does not count. */
export function isDirectLoopback(req: IncomingMessage): boolean {
  return isLoopbackAddress(req.socket.remoteAddress) && PROXY_HEADERS.every((h) => req.headers[h] === undefined);
}

/** How long an owner's sign-in lasts. */
export const OWNER_COOKIE_DAYS = 30;

export interface IdentityDeps {
  key: Buffer;
  owner: Actor;
  shares: Pick<ShareService, "checkLink">;
  now?: () => number;
}

export function createIdentify(deps: IdentityDeps) {
  const now = deps.now ?? Date.now;
  return async function identify(req: IncomingMessage): Promise<Identity> {
    const viewerValue = readCookie(req, VIEWER_COOKIE);
    const viewer = viewerValue ? verify(deps.key, viewerValue, 3) : null;
    if (viewer && viewer[0] === "view") {
      const [, linkId, sessionId] = viewer;
      const link = await deps.shares.checkLink(linkId, sessionId);
      return link.ok ? { kind: "viewer", sessionId, linkId, expiresAt: link.expiresAt } : { kind: "ended", sessionId, reason: link.reason };
    }
    if (isDirectLoopback(req)) return { kind: "owner", actor: deps.owner, via: "loopback" };
    const ownerValue = readCookie(req, OWNER_COOKIE);
    const owner = ownerValue ? verify(deps.key, ownerValue, 3) : null;
    if (owner && owner[0] === "owner" && owner[1] === deps.owner.userId) {
      const issued = Number(owner[2]);
      if (Number.isFinite(issued) && now() - issued < OWNER_COOKIE_DAYS * 86_400_000) return { kind: "owner", actor: deps.owner, via: "cookie" };
    }
    return { kind: "anonymous" };
  };
}

export type Identify = ReturnType<typeof createIdentify>;
