// Where a stored git credential may be used: a host, and a repository path prefix (its scope:
// "myorg" or "myorg/app", "" for the whole host). Shared by the server, which picks the credential
// for a remote, and the runner, whose credential helper answers only for paths under the scope
// (a redirect to another path on the same host gets nothing). Paths are compared as whole
// segments — "myorg" never covers "myorg-evil" — and case-sensitively, since a forge may keep
// "MyOrg" and "myorg" as two owners; a last segment's ".git" is ignored. A path a server could
// read otherwise than this code does (percent-escapes, which may hide a "/" or "..", "." and ".."
// segments, empty segments, characters outside a plain set) matches no scope: only a host-wide
// credential can reach it, so every trick fails closed.
import { z } from "zod";

const SEGMENT = /^[A-Za-z0-9._~+@-]+$/;

/** A stored scope as it travels: plain segments joined by "/", or "" (the whole host). */
export const GitScope = z
  .string()
  .max(1000)
  .refine((s) => s === "" || scopeSegments(s) !== undefined, { message: "not a repository path prefix" });

/** `pathname`'s segments with a last ".git" taken off; undefined when it is not a plain path. */
export function pathSegments(pathname: string): string[] | undefined {
  if (!pathname.startsWith("/")) return undefined;
  let p = pathname.slice(1);
  if (p.endsWith("/")) p = p.slice(0, -1);
  if (!p) return [];
  const segments = p.split("/");
  const last = segments.length - 1;
  if (segments[last].length > 4 && segments[last].endsWith(".git")) segments[last] = segments[last].slice(0, -4);
  return segments.every((s) => SEGMENT.test(s) && s !== "." && s !== "..") ? segments : undefined;
}

/** A stored scope's segments (it was made by pathSegments, so it has no ".git" and no slashes at its ends). */
function scopeSegments(scope: string): string[] | undefined {
  const segments = pathSegments(`/${scope}`);
  return segments && segments.length > 0 && segments.join("/") === scope ? segments : undefined;
}

/** Whether a credential scoped to `scope` may be used for the remote URL `url`. */
export function scopeCovers(scope: string, url: string): boolean {
  if (scope === "") return true;
  const want = scopeSegments(scope);
  let have: string[] | undefined;
  try {
    have = pathSegments(new URL(url).pathname);
  } catch {
    return false;
  }
  return !!want && !!have && want.length <= have.length && want.every((s, i) => s === have[i]);
}

/** How a person reads a credential's reach: `github.com/myorg` or `github.com`. */
export function scopeLabel(host: string, scope: string): string {
  return scope ? `${host}/${scope}` : host;
}
