// The ways into a preview host for a browser the preview cannot recognise by itself (an owner
// signed in from another machine: the IDE's cookies never reach a preview host):
//   POST /api/preview/ticket?session=…&port=…       on the IDE's host: a ticket as JSON (the pane
//                                                    frames `<preview>/<path>?__quiver_ticket=…`)
//   GET  /api/preview/open?session=…&port=…&path=…  on the IDE's host: a redirect to the preview
//                                                    with a fresh ticket (the pane's "open in a tab")
//   any request with `__quiver_ticket` on a preview host: the ticket is redeemed for the host's own
//   cookie and the browser is sent to the same URL without it (or gets a page saying why not).
// Both IDE routes are the session owner's only (a share view's request is never the owner's).
import type { IncomingMessage, ServerResponse } from "node:http";
import { PreviewPath, PreviewPort, previewOrigin, type PreviewTarget } from "../protocol/preview";
import { takeTicket, withTicket, type PreviewTicket } from "../protocol/preview-ticket";
import { viaHttps } from "../auth/cookies";
import { errorPage } from "./error-page";
import { TICKET_REFUSALS, type PreviewHolder, type PreviewTickets } from "./ticket";

export interface PreviewEntryDeps {
  tickets: PreviewTickets;
  /** True when the person behind this request is the session's owner. */
  authorize(req: IncomingMessage, sessionId: string): Promise<boolean>;
  /** The signed-in person behind an authorized request, whom the ticket names; null: the local owner. */
  holderOf(req: IncomingMessage): PreviewHolder | null;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
};

/** The session and port a request names, or why not. */
function parseTarget(url: URL): { sessionId: string; port: number } | string {
  const sessionId = url.searchParams.get("session") ?? "";
  const port = Number(url.searchParams.get("port"));
  if (!/^[a-z0-9]{1,63}$/.test(sessionId)) return "session must be a session id";
  if (!PreviewPort.safeParse(port).success) return "port must be a number from 1 to 65535";
  return { sessionId, port };
}

export function createPreviewEntry(deps: PreviewEntryDeps) {
  const allowed = (req: IncomingMessage, sessionId: string) => deps.authorize(req, sessionId).catch(() => false);

  return {
    /** POST /api/preview/ticket: `{ ticket, expiresAt }` for the owner, 403 for anyone else. */
    ticket(req: IncomingMessage, res: ServerResponse): void {
      req.resume();
      if (req.method !== "POST") return json(res, 405, { error: "POST only" });
      const target = parseTarget(new URL(req.url ?? "/", "http://x"));
      if (typeof target === "string") return json(res, 400, { error: target });
      void allowed(req, target.sessionId).then((ok) => {
        if (!ok) return json(res, 403, { error: "no such session" });
        json(res, 200, deps.tickets.mint(target.sessionId, target.port, deps.holderOf(req)) satisfies PreviewTicket);
      });
    },

    /** GET /api/preview/open: to the preview with a ticket (a new tab of the owner's). */
    open(req: IncomingMessage, res: ServerResponse): void {
      const url = new URL(req.url ?? "/", "http://x");
      const target = parseTarget(url);
      const path = url.searchParams.get("path") ?? "/";
      if (typeof target === "string" || !PreviewPath.safeParse(path).success)
        return json(res, 400, { error: typeof target === "string" ? target : "path must start with /" });
      void allowed(req, target.sessionId).then((ok) => {
        if (!ok) return json(res, 403, { error: "no such session" });
        const ide = new URL(`${viaHttps(req) ? "https" : "http"}://${req.headers.host}`);
        const { ticket } = deps.tickets.mint(target.sessionId, target.port, deps.holderOf(req));
        res.writeHead(303, {
          location: previewOrigin(ide, target.sessionId, target.port) + withTicket(path, ticket),
          "cache-control": "no-store",
          "referrer-policy": "no-referrer",
        });
        res.end();
      });
    },

    /** On a preview host: redeems a ticket in the URL; false when the request carries none. */
    enter(req: IncomingMessage, res: ServerResponse, target: PreviewTarget): boolean {
      const found = takeTicket(req.url ?? "/");
      if (!found) return false;
      req.resume();
      deps.tickets.redeem(found.ticket, target).then(
        (redeemed) => {
          if (!redeemed.ok) {
            return errorPage(res, 403, target.port, {
              code: "refused",
              message: `${TICKET_REFUSALS[redeemed.reason]} Open the preview again from the IDE's Preview pane.`,
            });
          }
          // The ticket leaves the address bar at once, and never travels on in a Referer. The
          // Location is absolute: a path that starts `//` or `/\` (the app's own, reported by its
          // page and opened in a tab) would read as another host in a relative one.
          res.writeHead(303, {
            location: `${viaHttps(req) ? "https" : "http"}://${req.headers.host}${found.clean}`,
            "set-cookie": deps.tickets.cookie(req, target, redeemed.holder),
            "cache-control": "no-store",
            "referrer-policy": "no-referrer",
          });
          res.end();
        },
        () =>
          errorPage(res, 500, target.port, {
            code: "reset",
            message: "the ticket could not be checked; try again from the Preview pane",
          }),
      );
      return true;
    },
  };
}

export type PreviewEntry = ReturnType<typeof createPreviewEntry>;
