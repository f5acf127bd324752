// The live preview over HTTP. The browser loads a workspace's app from this server, which
// forwards every request over the session's runner connection to 127.0.0.1:<port> on the
// runner's machine (never connecting to the port itself: the runner may be elsewhere) and
// streams the answer back, both bodies bounded by the bridge's flow-control window.
//
// Addressing: each (session, port) gets its own host, `<port>-<session>.localhost:<server port>`
// (or `.<IDE host>` when the IDE is reached by name), rather than a path prefix such as
// `/preview/<session>/<port>/`. With a prefix, every absolute URL in the app (`/assets/x.js`,
// `fetch("/api")`, a redirect to `/login`) escapes to the IDE's own routes; with a host of its
// own the app sees `/` as its root, unchanged. It also makes the app a different origin from
// the IDE: its scripts cannot read the IDE's pages or storage, and the Origin guard refuses its
// writes to the IDE's API. Chromium and Firefox resolve every *.localhost name to loopback, so
// no DNS set-up is needed locally; the server's Host guard (server/http/guard.ts) accepts such a
// host when the name under it is allowed, and everything on a preview host goes to the app,
// never to Next or tRPC. A remote IDE at a real name needs wildcard DNS for `*.<name>`.
//
// Requests are rewritten as a local dev server expects them: Host `localhost:<port>` (dev
// servers refuse unknown hosts), Origin and Referer moved from the preview origin to
// `http://localhost:<port>`, a Location that points at the app's own loopback address moved
// back to the preview origin, and a Set-Cookie's Domain dropped (the cookie stays on the
// preview host). Hop-by-hop headers are dropped both ways. Only the session's owner may use
// it, decided per request: the owner by server/auth (loopback; a share-link viewer never), or
// a browser holding the preview host's own cookie, got with a ticket the owner's IDE asked for
// (the IDE's cookies are host-only and never reach a preview host: server/preview/ticket.ts,
// entry.ts); that cookie is never passed on to the app. WebSocket upgrades on a preview host
// (dev servers' hot reload) are forwarded the same way (server/preview/ws.ts), with the same
// rewrites and the same Origin guard as the app's form posts. Pages the frame navigates to carry
// a small script that keeps the pane's address bar in step (server/preview/inject.ts). Another
// site's page (another session's app) may navigate to a preview host, never load from it.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { randomUUID } from "node:crypto";
import {
  endToEndHeaders,
  headerPairs,
  PREVIEW_PORTS_OP,
  PreviewPath,
  PreviewPorts,
  type PreviewTarget,
} from "../protocol/preview";
import type { Executor } from "../executors/contract";
import type { PreviewBridge, PreviewStream } from "./bridge";
import { errorPage } from "./error-page";
import { createInjector, injectable, isNavigation } from "./inject";
import { createPreviewEntry } from "./entry";
import { withoutPreviewCookie, type PreviewHolder, type PreviewTickets } from "./ticket";
import { createPreviewWs } from "./ws";

export interface PreviewHttpDeps {
  bridge: PreviewBridge;
  /** Runs the preview_ports op on the session's runner. */
  runner: Pick<Executor, "run"> & {
    /** Finds where the session's workspace is (the database's placement) before a stream opens on it. */
    place?(sessionId: string): Promise<unknown>;
  };
  /** True when the person behind this request is the owner (server/auth; a share view's request never). */
  isOwner(req: IncomingMessage): Promise<boolean>;
  /** True when the session is the owner's (the person isOwner identified on `req`). */
  ownerSession(sessionId: string, req: IncomingMessage): Promise<boolean>;
  /** Tickets and the preview hosts' own cookies (server/preview/ticket.ts). */
  tickets: PreviewTickets;
  /** The signed-in person an IDE request is (named in its ticket); null: the local owner. */
  holderOf(req: IncomingMessage): PreviewHolder | null;
  /** Whether a cookie's person still has the device and membership it was given for. */
  holds(holder: PreviewHolder): Promise<boolean>;
  /** Whether accounts are on: a cookie made before (its ticket named nobody) is then no one's. */
  accountsOn?(): Promise<boolean>;
  /** A preview socket of that person: ended when their device or membership goes. */
  register(socket: Duplex, holder: PreviewHolder): void;
  /** Whole-exchange deadline (default 10 minutes: long polls and event streams live that long). */
  deadlineMs?: number;
  log?(line: string): void;
}

const BODILESS = new Set(["GET", "HEAD", "OPTIONS", "DELETE", "TRACE"]);

export function upstreamHeaders(req: IncomingMessage, t: PreviewTarget): Array<[string, string]> {
  const publicOrigin = `http://${req.headers.host}`;
  const appOrigin = `http://localhost:${t.port}`;
  const out: Array<[string, string]> = [];
  for (const [k, v] of endToEndHeaders(headerPairs(req.rawHeaders))) {
    const key = k.toLowerCase();
    if (key === "host" || key.startsWith("x-forwarded-")) continue;
    if (key === "cookie") {
      const kept = withoutPreviewCookie(v);
      if (kept) out.push([k, kept]);
      continue;
    }
    if ((key === "origin" || key === "referer") && v.startsWith(publicOrigin))
      out.push([k, appOrigin + v.slice(publicOrigin.length)]);
    else out.push([k, v]);
  }
  out.push(
    ["host", `localhost:${t.port}`],
    ["x-forwarded-host", String(req.headers.host)],
    ["x-forwarded-proto", "http"],
  );
  if (req.socket.remoteAddress) out.push(["x-forwarded-for", req.socket.remoteAddress]);
  return out;
}

/**
 * A Set-Cookie of the app's without its Domain attributes: the cookie stays on the preview host.
 * A preview host is a subdomain of the IDE's (`8000-x.ide.example.com`), so `Domain=ide.example.com`
 * would plant a cookie on the IDE and on every other preview (a session cookie of another account
 * under the IDE's name, shadowing the person's own). Browsers split attributes on `;` and compare
 * names trimmed and in any case, as here.
 */
export function hostOnlyCookie(value: string): string {
  const [pair, ...attrs] = value.split(";");
  const kept = attrs.filter((a) => a.split("=")[0].trim().toLowerCase() !== "domain");
  return kept.length === attrs.length ? value : [pair, ...kept].join(";");
}

function downstreamHeaders(
  headers: Array<[string, string]>,
  t: PreviewTarget,
  publicOrigin: string,
): Map<string, string[]> {
  const loopback = new RegExp(`^https?://(localhost|127\\.0\\.0\\.1|\\[::1\\]|0\\.0\\.0\\.0):${t.port}(?=/|$)`, "i");
  const out = new Map<string, string[]>();
  for (const [k, v] of endToEndHeaders(headers)) {
    const key = k.toLowerCase();
    const value = key === "location" ? v.replace(loopback, publicOrigin) : key === "set-cookie" ? hostOnlyCookie(v) : v;
    out.set(key, [...(out.get(key) ?? []), value]);
  }
  return out;
}

/**
 * A request another site's page makes of a preview host (a script, image or fetch; not a
 * navigation). Such a request carries the host's SameSite=None cookie, and on loopback the owner
 * needs none, so another session's app (or any site that knows the name) could run the app's
 * scripts in its own page and read what they hold. Nothing of Quiver's loads from a preview host:
 * the IDE only frames it, and the app's own requests are same-origin. Browsers without Fetch
 * Metadata send neither header and are let through.
 */
export function fromAnotherSite(req: IncomingMessage): boolean {
  const site = String(req.headers["sec-fetch-site"] ?? "").toLowerCase();
  const mode = String(req.headers["sec-fetch-mode"] ?? "").toLowerCase();
  return (site === "cross-site" || site === "same-site") && mode !== "navigate";
}

export function createPreviewHttp(deps: PreviewHttpDeps) {
  const log = deps.log ?? (() => {});
  const sockets = createPreviewWs({ bridge: deps.bridge, headersFor: upstreamHeaders });
  // Every request is checked on its own: who asks differs from one request to the next (a
  // page loads dozens of modules: `isOwner` and `ownerSession` keep their checks cheap).
  const allowed = async (req: IncomingMessage, sessionId: string): Promise<boolean> =>
    (await deps.isOwner(req)) && deps.ownerSession(sessionId, req);
  const entry = createPreviewEntry({ tickets: deps.tickets, authorize: allowed, holderOf: deps.holderOf });
  /**
   * On a preview host: in (with the person a cookie admitted, if any), 401 (nobody this host
   * knows, or a cookie whose person was signed out, removed or given another role since) or 403
   * (known, but not this session's owner).
   */
  const access = async (req: IncomingMessage, t: PreviewTarget): Promise<{ holder?: PreviewHolder } | 401 | 403> => {
    const admitted = deps.tickets.admits(req, t);
    if (!admitted && !(await deps.isOwner(req))) return 401;
    const holder = admitted?.holder ?? undefined;
    if (holder && !(await deps.holds(holder))) return 401;
    // A cookie the machine's owner got while accounts were off names nobody: once they are on,
    // it is nobody's to use (the person it was given to signs in and gets a new one).
    if (admitted && !holder && (await deps.accountsOn?.())) return 401;
    if (!(await deps.ownerSession(t.sessionId, req))) return 403;
    // The bridge opens streams synchronously on the runner it already knows for the session.
    await deps.runner.place?.(t.sessionId).catch(() => undefined);
    return holder ? { holder } : {};
  };

  function forward(req: IncomingMessage, res: ServerResponse, t: PreviewTarget): void {
    const publicOrigin = `http://${req.headers.host}`;
    const method = (req.method ?? "GET").toUpperCase();
    const path = req.url && req.url.startsWith("/") ? req.url : "/";
    // The runner would drop a frame its schema refuses, leaving the browser to wait for nothing.
    if (!PreviewPath.safeParse(path).success)
      return errorPage(res, 400, t.port, { code: "invalid", message: "this path cannot be forwarded" });
    const hasBody =
      !BODILESS.has(method) ||
      req.headers["content-length"] !== undefined ||
      req.headers["transfer-encoding"] !== undefined;
    const navigation = isNavigation(req);
    let headers = upstreamHeaders(req, t);
    // A navigation's page gets the location script, which needs the bytes as they are.
    if (navigation)
      headers = [...headers.filter(([k]) => k.toLowerCase() !== "accept-encoding"), ["accept-encoding", "identity"]];
    let started = false;
    let injector: ReturnType<typeof createInjector> | undefined;
    let unacked = 0;
    const stream: PreviewStream | undefined = deps.bridge.open(
      t.sessionId,
      { port: t.port, method, path, headers, hasBody, deadline: Date.now() + (deps.deadlineMs ?? 600_000) },
      {
        head(status, upstream) {
          try {
            const down = downstreamHeaders(upstream, t, publicOrigin);
            if (navigation && injectable(status, down)) {
              injector = createInjector();
              down.delete("content-length");
            }
            for (const [k, v] of down) res.setHeader(k, v);
            res.writeHead(status);
            started = true;
          } catch (err) {
            // A header Node will not send (invalid characters): the page fails, not the server.
            stream?.cancel();
            for (const name of res.getHeaderNames()) res.removeHeader(name);
            errorPage(res, 502, t.port, {
              code: "invalid",
              message: `the app's answer cannot be relayed: ${(err as Error).message}`,
            });
          }
        },
        data(chunk) {
          // Acknowledged once the bytes have left for the browser: a slow reader slows the app.
          unacked += chunk.length;
          const out = injector ? injector.push(chunk) : chunk;
          if (!out) return;
          const bytes = unacked;
          unacked = 0;
          res.write(out, () => stream?.ack(bytes));
        },
        end(error) {
          if (!error) {
            const rest = injector?.end();
            return void (rest ? res.end(rest) : res.end());
          }
          if (started) return void res.destroy(); // the browser sees a cut-off body, not a complete one
          if (error.code !== "refused") log(`preview ${t.sessionId}:${t.port} ${method} ${path}: ${error.message}`);
          errorPage(res, error.code === "timeout" ? 504 : 502, t.port, error);
        },
        drain: () => req.resume(),
      },
    );
    if (!stream) {
      errorPage(res, 502, t.port, { code: "reset", message: "the runner of this session is not connected" });
      req.resume();
      return;
    }
    res.on("close", () => {
      if (!res.writableFinished) stream?.cancel();
    });
    if (!hasBody) return void req.resume();
    req.on("data", (chunk: Buffer) => {
      if (!stream?.write(chunk, false)) req.pause();
    });
    req.on("end", () => stream?.write(Buffer.alloc(0), true));
  }

  return {
    /** Serves a request addressed to a preview host (the caller has checked the Host guard). */
    handle(req: IncomingMessage, res: ServerResponse, target: PreviewTarget): void {
      if (fromAnotherSite(req))
        return errorPage(res, 403, target.port, {
          code: "refused",
          message: "A page of another site may open this preview, not load from it.",
        });
      if (entry.enter(req, res, target)) return;
      access(req, target).then(
        (ok) => {
          if (ok === 401)
            return errorPage(res, 401, target.port, {
              code: "refused",
              message:
                "This browser has no access to this preview. Open it from the Preview pane of the session's IDE, signed in as its owner: the pane brings a one-minute ticket.",
            });
          if (ok === 403)
            return errorPage(res, 403, target.port, {
              code: "refused",
              message: "This preview belongs to a session you cannot open.",
            });
          forward(req, res, target);
        },
        () => errorPage(res, 500, target.port, { code: "reset", message: "access check failed" }),
      );
    },

    /** GET /api/preview/ports?session=<id> on the IDE's host: the ports the pane lists, as JSON. */
    ports(req: IncomingMessage, res: ServerResponse): void {
      const sessionId = new URL(req.url ?? "/", "http://x").searchParams.get("session") ?? "";
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
        res.end(JSON.stringify(body));
      };
      if (!/^[a-z0-9]{1,63}$/.test(sessionId)) return json(400, { error: "session must be a session id" });
      const abort = new AbortController();
      res.on("close", () => abort.abort());
      void (async () => {
        if (!(await allowed(req, sessionId).catch(() => false))) return json(403, { error: "no such session" });
        try {
          const r = await deps.runner.run({
            sessionId,
            callId: randomUUID(),
            op: PREVIEW_PORTS_OP,
            input: {},
            deadline: Date.now() + 5_000,
            signal: abort.signal,
          });
          if (!r.ok) return json(502, { error: r.output });
          json(200, PreviewPorts.parse(JSON.parse(r.output)));
        } catch (err) {
          json(502, { error: (err as Error).message });
        }
      })();
    },

    /** POST /api/preview/ticket and GET /api/preview/open on the IDE's host (server/preview/entry.ts). */
    ticket: entry.ticket,
    open: entry.open,

    /** A WebSocket upgrade on a preview host: relayed to the app, never to Quiver's own sockets. */
    handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, target: PreviewTarget): void {
      access(req, target).then(
        (ok) => {
          if (typeof ok === "number")
            return socket.end("HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\nno such session\n");
          if (ok.holder) deps.register(socket, ok.holder);
          sockets.relay(req, socket, head, target);
        },
        () => socket.destroy(),
      );
    },

    dispose: () => sockets.dispose(),
  };
}

export type PreviewHttp = ReturnType<typeof createPreviewHttp>;
