// Who is asking, for every entry point of the server (tRPC over HTTP and WebSocket, the
// terminal socket, the live preview, the Next pages): one identify() per request, remembered
// on the request so sockets decided at upgrade time can be asked again synchronously. Also the
// owner's sign-in URL: printed when the server listens beyond loopback, else the first time a
// request (through a proxy) is refused, so it is never in the log for nothing. With accounts on
// (server/auth/accounts) there is no owner's URL: people sign in at /signin, pages send strangers
// there, and while no account exists the start prints a one-time URL that creates the first owner.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { hostname } from "node:os";
import type { Env } from "../env";
import type { Actor } from "../services/types";
import type { ShareService } from "../services/shares";
import { shareViewPath } from "../protocol/share-view";
import { deriveKey, loadSecret } from "./crypto";
import { createIdentify, isLoopbackAddress, type Identity } from "./identity";
import { createAuthRoutes } from "./http";
import { notSignedIn } from "./pages";
import { createLiveViewers } from "./viewers";
import type { Accounts } from "./accounts";
import type { SocketOwner } from "./accounts/sockets";

export type { Identity } from "./identity";
export { isDirectLoopback, isOperator } from "./identity";

export interface AuthDeps {
  env: Pick<Env, "dataDir" | "HOST" | "QUIVER_ALLOWED_HOSTS">;
  /** The owner of this server (embedded mode: the local user). */
  owner: Actor;
  shares: Pick<ShareService, "checkLink" | "resolveToken" | "ended">;
  /** Accounts (absent: off for good, as in the embedded mode's tests). */
  accounts?: Pick<Accounts, "on" | "personOf" | "setupPath" | "sockets">;
  log(line: string): void;
  recheckMs?: number;
}

/** The name another machine reaches this server by (for the printed sign-in URL). */
function publicHost(env: AuthDeps["env"]): string {
  const bracket = (h: string) => (h.includes(":") ? `[${h}]` : h);
  const named = env.QUIVER_ALLOWED_HOSTS.find((h) => h !== "*" && h !== "localhost" && !isLoopbackAddress(h));
  if (named) return bracket(named);
  return env.HOST === "0.0.0.0" || env.HOST === "::" ? hostname() : bracket(env.HOST);
}

/** Pages anyone may load with accounts on (app/signin, app/signup). */
// /invite/<token>: an invitation link is opened before its holder has an account (the page holds no data).
const PUBLIC_PAGES = ["/signin", "/signup", "/invite"];
const PUBLIC_FILES = new Set(["/favicon.ico", "/favicon.svg"]);

export function createAuth(deps: AuthDeps) {
  const { env, log } = deps;
  const key = loadSecret(env.dataDir);
  const identifyOnce = createIdentify({ key, owner: deps.owner, shares: deps.shares, accounts: deps.accounts });
  const accountsOn = () => deps.accounts?.on() ?? Promise.resolve(false);
  const decided = new WeakMap<IncomingMessage, Promise<Identity>>();
  const known = new WeakMap<IncomingMessage, Identity>();
  const viewers = createLiveViewers({ ended: (ids) => deps.shares.ended(ids), recheckMs: deps.recheckMs, log });

  const loopbackOnly = isLoopbackAddress(env.HOST) || env.HOST === "localhost";
  let port = 0;
  let signInPath = "";
  let shown = false;
  let accountsSeen = false;
  const showSignIn = () => {
    if (shown || !signInPath || !port || accountsSeen) return;
    shown = true;
    log(`owner sign-in from another machine (works once): http://${publicHost(env)}:${port}${signInPath}`);
  };
  const routes = createAuthRoutes({
    key,
    ownerUserId: deps.owner.userId,
    shares: deps.shares,
    onSignInPath: (path) => {
      signInPath = path;
      shown = false;
      if (!loopbackOnly) showSignIn();
    },
  });

  const socketOwner = (authSessionId: string, actor: Actor): SocketOwner => ({
    authSessionId,
    userId: actor.userId,
    orgId: actor.orgId,
    role: actor.role,
  });

  function identify(req: IncomingMessage): Promise<Identity> {
    let p = decided.get(req);
    if (!p) {
      p = identifyOnce(req).then((id) => (known.set(req, id), id));
      decided.set(req, p);
    }
    return p;
  }

  return {
    identify,
    /** The owner's actor for a request already identified (sockets), else null. */
    ownerOf(req: IncomingMessage): Actor | null {
      const id = known.get(req);
      return id?.kind === "owner" ? id.actor : null;
    },
    /** The signed-in person (device and membership) of a request already identified; null for
     *  the local owner (no device) and anyone else. */
    signedInOf(req: IncomingMessage): SocketOwner | null {
      const id = known.get(req);
      return id?.kind === "owner" && id.authSessionId ? socketOwner(id.authSessionId, id.actor) : null;
    },
    /** True when the request is the owner (the preview and other owner-only entry points). */
    isOwner: (req: IncomingMessage) => identify(req).then((id) => id.kind === "owner"),
    routes,
    viewers,
    /** The key of the live preview's tickets and cookies (server/preview/ticket.ts), from the cookie key. */
    previewKey: deriveKey(key, "preview"),
    /** The server listens on `p`: the first sign-in URL is made (and printed beyond loopback). */
    listening(p: number) {
      port = p;
      if (!deps.accounts) return routes.start();
      void (async () => {
        if (!(await accountsOn())) return routes.start();
        accountsSeen = true;
        const setup = await deps.accounts!.setupPath();
        if (setup)
          log(
            `accounts are required and none exists yet: create the first owner (works once): http://${publicHost(env)}:${port}${setup}`,
          );
      })().catch((err) => log(`could not tell how to sign in: ${(err as Error).message}`));
    },
    /**
     * Pages need someone: the owner, or whoever holds a link (the app's pages hold no data; its
     * tRPC calls are checked). A link's holder who is not the owner, at the home page or at its
     * session without the share view's mark (a bookmark, "/"), is sent to the share view.
     */
    guardPage(req: IncomingMessage, res: ServerResponse, serve: () => void): void {
      const path = (req.url ?? "/").split("?")[0];
      // Next's own fetches of a route's payload are not page loads: never redirected.
      const pageLoad = req.headers.rsc === undefined;
      const toView = (sessionId: string) =>
        void res.writeHead(303, { location: shareViewPath(sessionId), "cache-control": "no-store" }).end();
      identify(req).then(
        async (id) => {
          if (id.kind === "anonymous" && id.shareView) {
            return pageLoad && (path === "/" || path === `/s/${id.shareView}`) ? toView(id.shareView) : serve();
          }
          if (id.kind === "anonymous" && (await accountsOn())) {
            accountsSeen = true;
            // The sign-in pages (and their scripts) are for strangers; any other page sends them there.
            if (
              PUBLIC_PAGES.some((p) => path === p || path.startsWith(`${p}/`)) ||
              path.startsWith("/_next/") ||
              PUBLIC_FILES.has(path)
            )
              return serve();
            const back = path === "/" ? "" : `?next=${encodeURIComponent(req.url ?? "/")}`;
            return void res.writeHead(303, { location: `/signin${back}`, "cache-control": "no-store" }).end();
          }
          if (id.kind === "anonymous") return (showSignIn(), notSignedIn(res));
          if (id.kind === "viewer" && path === "/") return toView(id.sessionId);
          serve();
        },
        () => {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end("could not check who is asking\n");
        },
      );
    },
    /** Browser sockets need the owner or a live viewer; ended links and strangers are refused. */
    guardUpgrade(req: IncomingMessage, socket: Duplex, accept: () => void): void {
      const refuse = (status: string, why: string) =>
        socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n${why}\n`);
      identify(req).then(
        (id) => {
          if (id.kind === "anonymous") return void (showSignIn(), refuse("401 Unauthorized", "not signed in"));
          if (id.kind === "ended") return void refuse("403 Forbidden", `share link ${id.reason}`);
          if (id.kind === "outsider") return void refuse("403 Forbidden", "a member of no org");
          // A person's socket ends when their device is signed out or their membership changes.
          if (id.kind === "owner" && id.authSessionId)
            deps.accounts?.sockets.register(socket, socketOwner(id.authSessionId, id.actor));
          accept();
        },
        () => socket.destroy(),
      );
    },
    dispose: () => viewers.dispose(),
  };
}

export type Auth = ReturnType<typeof createAuth>;
