// The two cookies: the owner's sign-in and a share-link viewer's pass. HttpOnly (page scripts
// never see them), SameSite=Lax (another site's form post does not carry them), Secure when
// the request came over https, host-only (a live preview's host never receives them), and over
// https named __Host-… so a preview's script cannot plant one the IDE would read (cookie-jar.ts).
import type { IncomingMessage } from "node:http";
import { ownSetCookie } from "./cookie-jar";

export const OWNER_COOKIE = "quiver_owner";
export const VIEWER_COOKIE = "quiver_view";

export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const pair of header.split(";")) {
    const at = pair.indexOf("=");
    if (at < 0 || pair.slice(0, at).trim() !== name) continue;
    try {
      return decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** True when the browser reached us over https (directly, or through a proxy that says so). */
export function viaHttps(req: IncomingMessage): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  return (
    String(req.headers["x-forwarded-proto"] ?? "")
      .split(",")[0]
      .trim() === "https"
  );
}

/** A Set-Cookie value; `maxAgeSeconds` 0 deletes the cookie. */
export function cookie(req: IncomingMessage, name: string, value: string, maxAgeSeconds: number): string {
  const attrs = [
    `${name}=${encodeURIComponent(value)}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Lax",
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
  ];
  // Over https also named __Host-…, which a preview's script cannot set (cookie-jar.ts).
  return ownSetCookie(attrs.join("; "), viaHttps(req));
}
