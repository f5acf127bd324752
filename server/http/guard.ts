// Request origin checks. A local IDE that can run shell commands must not be reachable from a
// web page the person happens to visit: DNS rebinding (a foreign Host) and cross-site WebSocket
// or form posts (a foreign Origin) are refused before anything else runs.
import type { IncomingMessage } from "node:http";
import { parsePreviewHost } from "../protocol/preview";

export interface GuardOptions {
  /** Host names (without port) this server answers to. */
  allowedHosts: string[];
}

function hostName(hostHeader: string | undefined): string | undefined {
  if (!hostHeader) return undefined;
  try {
    return new URL(`http://${hostHeader}`).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  } catch {
    return undefined;
  }
}

export function createGuard({ allowedHosts }: GuardOptions) {
  const allowed = new Set(allowedHosts.map((h) => h.toLowerCase()));
  const hostOk = (req: IncomingMessage) => {
    const name = hostName(req.headers.host);
    if (name === undefined) return false;
    // A live preview's own host (`8123-<session>.localhost`) counts as the allowed host under it.
    return allowed.has("*") || allowed.has(name) || allowed.has(parsePreviewHost(name)?.base ?? "");
  };
  return {
    /** Null when the request may proceed, else the reason it may not. */
    check(req: IncomingMessage, { requireSameOrigin }: { requireSameOrigin: boolean }): string | null {
      if (!hostOk(req))
        return `host ${JSON.stringify(req.headers.host ?? "")} is not allowed (set QUIVER_ALLOWED_HOSTS)`;
      const origin = req.headers.origin;
      if (!requireSameOrigin || origin === undefined) return null;
      try {
        if (new URL(origin).host.toLowerCase() === String(req.headers.host).toLowerCase()) return null;
      } catch {
        // fall through
      }
      return `origin ${JSON.stringify(origin)} is not this server`;
    },
  };
}

/**
 * Why a request's path is refused, or null. Quiver's own routes (and the allow-list of
 * better-auth's paths among them) compare the path as sent; a handler behind them may resolve
 * `.`/`..` segments (spelled `%2e` too, or with `\`) as the URL standard does, and would then run
 * a path that was never checked. A browser always sends the resolved form, so anything else is
 * refused.
 */
export function pathRefusal(url: string | undefined): string | null {
  const raw = (url ?? "/").split("?")[0];
  let resolved: string;
  try {
    resolved = new URL(raw, "http://quiver.invalid").pathname;
  } catch {
    return "the request path is not a valid URL path";
  }
  return raw.startsWith("/") && resolved === raw
    ? null
    : `the request path ${JSON.stringify(raw.slice(0, 200))} is not in its resolved form (no "." or ".." segments, "\\" or "//" at its start)`;
}
