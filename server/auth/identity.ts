// Who a request is. A request the share view marked (server/protocol/share-view.ts) is a viewer
// or nobody (the same with accounts on or off):
//  1. its signed viewer cookie (set by a share link) makes it a viewer of exactly that session,
//     even from loopback or with the owner's cookie; a revoked or expired link, or no cookie,
//     is refused ("ended"), never quietly promoted to the owner.
// An unmarked request never looks at the viewer cookie (so opening one's own link in a tab
// leaves the owner's other tabs the owner's). With accounts off (server/auth/accounts):
//  2. from loopback, not through a proxy, it is the local owner (`npm start` needs no sign-in);
//  3. with a signed owner cookie (set by the sign-in URL) it is the owner;
// with accounts on, loopback and the owner cookie count for nothing:
//  2'. with a live better-auth session cookie it is that person, as a member of their active org
//     (better-auth's activeOrganizationId, else their first org), kind "owner" via "account";
// either way:
//  4. anything else is anonymous, a stranger even if it holds a viewer cookie (the session that
//     cookie names is kept as a hint, so a page can send it to the share view).
import type { IncomingMessage } from "node:http";
import type { Actor } from "../services/types";
import type { ShareService } from "../services/shares";
import type { Accounts } from "./accounts";
import { SHARE_VIEW_HEADER, SHARE_VIEW_PARAM } from "../protocol/share-view";
import { parsePreviewHost } from "../protocol/preview";
import { OWNER_COOKIE, VIEWER_COOKIE, readCookie } from "./cookies";
import { verify } from "./crypto";

export type Identity =
  /** A member acting as themself: the local owner (loopback, cookie) or a signed-in person (account). */
  | { kind: "owner"; actor: Actor; via: "loopback" | "cookie" | "account"; authSessionId?: string }
  | { kind: "viewer"; sessionId: string; linkId: string; expiresAt: Date | null }
  | { kind: "ended"; sessionId: string | null; reason: "unknown" | "expired" | "revoked" }
  /** `shareView`: the session a (signature-checked) viewer cookie in the request names. */
  | { kind: "anonymous"; shareView?: string; accounts?: true }
  /** Signed in, but a member of no org (removed from all of them): refused with FORBIDDEN. */
  | { kind: "outsider"; userId: string; authSessionId: string };

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

/**
 * True when the share view marked the request: the header, or `?shared=1` on a page or socket
 * URL of Quiver's own (on a preview host the query is the previewed app's, not a mark).
 */
export function isShareView(req: IncomingMessage): boolean {
  if (req.headers[SHARE_VIEW_HEADER] === "1") return true;
  if (parsePreviewHost(req.headers.host)) return false;
  const q = (req.url ?? "").indexOf("?");
  return q >= 0 && new URLSearchParams((req.url ?? "").slice(q + 1)).get(SHARE_VIEW_PARAM) === "1";
}

/** The server's operator: the local owner with accounts off (loopback or the owner cookie), never
 *  a signed-in person, who is a member of one org among others. */
export const isOperator = (id: Identity): boolean => id.kind === "owner" && id.via !== "account";

/** How long an owner's sign-in lasts. */
export const OWNER_COOKIE_DAYS = 30;

export interface IdentityDeps {
  key: Buffer;
  /** The local owner (accounts off). */
  owner: Actor;
  /** Accounts (absent: always off, as in tests of the embedded mode). */
  accounts?: Pick<Accounts, "on" | "personOf">;
  shares: Pick<ShareService, "checkLink">;
  now?: () => number;
}

export function createIdentify(deps: IdentityDeps) {
  const now = deps.now ?? Date.now;
  return async function identify(req: IncomingMessage): Promise<Identity> {
    const viewerValue = readCookie(req, VIEWER_COOKIE);
    const viewer = viewerValue ? verify(deps.key, viewerValue, 3) : null;
    const view = viewer && viewer[0] === "view" ? { linkId: viewer[1], sessionId: viewer[2] } : null;
    if (isShareView(req)) {
      if (!view) return { kind: "ended", sessionId: null, reason: "unknown" };
      const link = await deps.shares.checkLink(view.linkId, view.sessionId);
      return link.ok
        ? { kind: "viewer", ...view, expiresAt: link.expiresAt }
        : { kind: "ended", sessionId: view.sessionId, reason: link.reason };
    }
    if (deps.accounts && (await deps.accounts.on())) {
      const person = await deps.accounts.personOf(req);
      if (person?.actor)
        return { kind: "owner", actor: person.actor, via: "account", authSessionId: person.authSessionId };
      if (person) return { kind: "outsider", userId: person.userId, authSessionId: person.authSessionId };
      return view
        ? { kind: "anonymous", shareView: view.sessionId, accounts: true }
        : { kind: "anonymous", accounts: true };
    }
    if (isDirectLoopback(req)) return { kind: "owner", actor: deps.owner, via: "loopback" };
    const ownerValue = readCookie(req, OWNER_COOKIE);
    const owner = ownerValue ? verify(deps.key, ownerValue, 3) : null;
    if (owner && owner[0] === "owner" && owner[1] === deps.owner.userId) {
      const issued = Number(owner[2]);
      if (Number.isFinite(issued) && now() - issued < OWNER_COOKIE_DAYS * 86_400_000)
        return { kind: "owner", actor: deps.owner, via: "cookie" };
    }
    return view ? { kind: "anonymous", shareView: view.sessionId } : { kind: "anonymous" };
  };
}

export type Identify = ReturnType<typeof createIdentify>;
