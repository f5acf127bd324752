// The HTTP side of signing in and sharing:
//   GET /signin?token=…   the owner's one-time sign-in URL (printed at start): sets the owner cookie
//   GET /share/<token>    a read-only link: sets the viewer cookie, redirects to the session's
//                         share view (`/s/<id>?shared=1`: only that view's requests use the cookie)
//   GET /share/leave      forgets the viewer cookie
// The sign-in token lives in memory only, as a hash; once used, a fresh URL is printed.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ShareService } from "../services/shares";
import { shareViewPath } from "../protocol/share-view";
import { OWNER_COOKIE, VIEWER_COOKIE, cookie } from "./cookies";
import { hashToken, newToken, sameText, sign } from "./crypto";
import { OWNER_COOKIE_DAYS } from "./identity";
import { linkEnded, page, SIGN_IN_HELP } from "./pages";

/** How long a viewer cookie lasts at most (a link's own expiry ends it sooner). */
const VIEWER_COOKIE_DAYS = 30;

export interface AuthRoutesDeps {
  key: Buffer;
  ownerUserId: string;
  shares: Pick<ShareService, "resolveToken">;
  /** Called with each new sign-in path (`/signin?token=…`): at start and after each use. */
  onSignInPath(path: string): void;
  now?: () => number;
}

export function createAuthRoutes(deps: AuthRoutesDeps) {
  const now = deps.now ?? Date.now;
  let signInHash = "";
  const rotate = () => {
    const token = newToken(24);
    signInHash = hashToken(token);
    deps.onSignInPath(`/signin?token=${token}`);
  };

  function signIn(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const token = url.searchParams.get("token") ?? "";
    if (!token || !signInHash || !sameText(hashToken(token), signInHash)) {
      return page(res, 401, "Sign-in link not valid", ["This sign-in URL is wrong or was already used.", SIGN_IN_HELP]);
    }
    const value = sign(deps.key, ["owner", deps.ownerUserId, String(now())]);
    rotate();
    res.writeHead(303, {
      location: "/",
      "set-cookie": cookie(req, OWNER_COOKIE, value, OWNER_COOKIE_DAYS * 86_400),
      "cache-control": "no-store",
    });
    res.end();
  }

  async function openLink(req: IncomingMessage, res: ServerResponse, token: string): Promise<void> {
    const link = await deps.shares.resolveToken(token);
    if (!link.ok) return linkEnded(res, link.reason);
    const value = sign(deps.key, ["view", link.linkId, link.sessionId]);
    const cap = VIEWER_COOKIE_DAYS * 86_400;
    const maxAge = link.expiresAt ? Math.min(cap, (link.expiresAt.getTime() - now()) / 1000) : cap;
    res.writeHead(303, {
      location: shareViewPath(link.sessionId),
      "set-cookie": cookie(req, VIEWER_COOKIE, value, maxAge),
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    });
    res.end();
  }

  return {
    /** Prints the first sign-in URL (call once the server listens). */
    start: rotate,
    /** Handles the request if it is one of these routes; false otherwise. */
    handle(req: IncomingMessage, res: ServerResponse): boolean {
      const url = new URL(req.url ?? "/", "http://x");
      if (req.method !== "GET" && req.method !== "HEAD") return false;
      // Only the owner's URL: /signin itself is the accounts' sign-in page (app/signin).
      if (url.pathname === "/signin" && url.searchParams.has("token")) return (signIn(req, res, url), true);
      if (url.pathname === "/share/leave") {
        res.writeHead(303, {
          location: "/",
          "set-cookie": cookie(req, VIEWER_COOKIE, "", 0),
          "cache-control": "no-store",
        });
        res.end();
        return true;
      }
      const share = /^\/share\/([^/]+)$/.exec(url.pathname);
      if (!share) return false;
      openLink(req, res, share[1]).catch(() =>
        page(res, 500, "Share link not checked", ["The server could not check this link; try again."]),
      );
      return true;
    },
  };
}
