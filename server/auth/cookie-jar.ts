// Quiver's own cookies as the server reads and writes them, so a live preview cannot plant one.
// A preview is served at `<port>-<session>.<ide host>`, a subdomain of the IDE: the previewed
// app (the agent's code) may set a cookie with `Domain=<ide host>` from a script, and the
// browser then sends it to the IDE beside the person's own, first when its Path is longer. Read
// first-match, a planted sign-in signed the person out or into the agent's account.
// Over https each of Quiver's cookies is named `__Host-…`, which a browser takes only from the
// IDE's own host (no Domain, Path=/, Secure): a cookie of the plain name is not Quiver's there and
// is dropped. Over plain http, where no prefix holds, a cookie that comes twice is dropped
// whole: which one is the person's cannot be told, and being signed out is the lesser harm.
import type { IncomingMessage } from "node:http";

const HOST_PREFIX = "__Host-";

/** Quiver's own cookies: the local owner's, a share-link viewer's, and better-auth's (`quiver.…`,
 *  and `quiver-…`, which some of its readers also try). */
export const isOwnCookie = (name: string): boolean =>
  name === "quiver_owner" || name === "quiver_view" || name.startsWith("quiver.") || name.startsWith("quiver-");

/** A name without a `__Host-`/`__Secure-` prefix (browsers match them in any case). better-auth
 *  reads `__Secure-<name>` before `<name>`, and a subdomain may set a `__Secure-` cookie. */
const unprefixed = (name: string): string => name.replace(/^__(host|secure)-/i, "");

/** The Cookie header with Quiver's cookies as the server's readers expect them (plain names),
 *  each taken only as the browser can have got it from Quiver's own host. Others as they came. */
export function ownCookieHeader(header: string, https: boolean): string {
  const pairs = header
    .split(";")
    .map((text) => text.trim())
    .filter(Boolean)
    .map((text) => {
      const at = text.indexOf("=");
      const name = at < 0 ? text : text.slice(0, at).trim();
      return { text, name, value: at < 0 ? "" : text.slice(at + 1), own: ownName(name, https) };
    });
  const counts = new Map<string, number>();
  for (const p of pairs) if (p.own) counts.set(p.own, (counts.get(p.own) ?? 0) + 1);
  const out: string[] = [];
  for (const p of pairs) {
    if (p.own) {
      if (counts.get(p.own) === 1) out.push(`${p.own}=${p.value}`);
    } else if (!isOwnCookie(unprefixed(p.name))) out.push(p.text);
  }
  return out.join("; ");
}

/** The plain name of one of Quiver's cookies as the browser could only have got it from
 *  Quiver's own host; undefined for any other cookie (and, over https, a plain-named one). */
function ownName(name: string, https: boolean): string | undefined {
  if (!https) return unprefixed(name) === name && isOwnCookie(name) ? name : undefined;
  const plain = name.startsWith(HOST_PREFIX) ? name.slice(HOST_PREFIX.length) : undefined;
  return plain !== undefined && isOwnCookie(plain) ? plain : undefined;
}

/** Rewrites `req`'s Cookie header in place (ownCookieHeader); called before anything reads it.
 *  `https`: the request came over https (cookies.ts viaHttps). */
export function takeOwnCookies(req: IncomingMessage, https: boolean): void {
  const header = req.headers.cookie;
  if (header) req.headers.cookie = ownCookieHeader(header, https);
}

/** A Set-Cookie value of the IDE's host as the browser must get it: over https Secure, and one
 *  of Quiver's own named `__Host-…` (which also requires Path=/ and no Domain). */
export function ownSetCookie(value: string, https: boolean): string {
  if (!https) return value;
  const at = value.indexOf("=");
  const name = value.slice(0, at).trim();
  if (at < 0 || !isOwnCookie(name)) return /;\s*secure(;|$)/i.test(value) ? value : `${value}; Secure`;
  const attrs = value
    .slice(at + 1)
    .split(";")
    .map((a) => a.trim());
  const kept = attrs.filter((a, i) => i === 0 || !/^(domain|path|secure)(=|$)/i.test(a));
  return [`${HOST_PREFIX}${name}=${kept[0]}`, ...kept.slice(1), "Path=/", "Secure"].join("; ");
}
