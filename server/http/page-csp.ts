// The Content-Security-Policy of every answer of Quiver's own host (pages, tRPC, uploads): the
// browser's last line when something the agent wrote (chat, tool cards, file names, terminal)
// slips past a renderer. Nothing is fetched, framed or run from a host off this machine, so a
// model-chosen URL in an <img>, CSS url() or prefetch carries nothing out, and no site may frame
// the IDE's approve buttons.
// No inline script runs unless it carries the page's nonce: a fresh one per page answer, handed
// to Next through the request's own CSP header (Next reads `script-src 'nonce-…'` there and puts
// it on the inline <script> tags that stream its payload), so every page renders per request
// (app/layout.tsx). Markup that slips past a renderer cannot know it. Answers that are not pages
// allow no inline script at all. The dev server's hot reload needs eval.
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/** The preview hosts this page may frame: `<port>-<session>.<base>` (server/protocol/preview.ts).
 *  Without a scheme a source matches the page's own (and its https upgrade). */
function previewSources(host: string | undefined): string[] {
  const m = /^(\[[0-9a-f:.]*\]|[a-z0-9.-]+)(:\d+)?$/.exec((host ?? "").toLowerCase());
  if (!m) return [];
  const name = m[1];
  const byIp = /^[\d.]+$/.test(name) || name.startsWith("[");
  const base = byIp ? "localhost" : name;
  return [`*.${base}${m[2] ?? ""}`];
}

// The in-browser WebContainer (app/_lib/webcontainer.ts), booted only when the person asks for it.
const WEBCONTAINER = ["https://stackblitz.com", "https://*.stackblitz.com", "https://*.webcontainer-api.io"];

export interface PolicyOptions {
  host: string | undefined;
  dev: boolean;
  /** The page's script nonce (base64); none for answers that are not pages. */
  nonce?: string;
}

export function pageContentSecurityPolicy(options: PolicyOptions) {
  const nonce = options.nonce && /^[A-Za-z0-9+/]+={0,2}$/.test(options.nonce) ? [`'nonce-${options.nonce}'`] : [];
  const directives: Record<string, string[]> = {
    "default-src": ["'self'"],
    "script-src": ["'self'", ...nonce, ...(options.dev ? ["'unsafe-eval'"] : [])],
    "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'", "data:", "blob:"],
    "font-src": ["'self'", "data:"],
    "connect-src": ["'self'"],
    "worker-src": ["'self'", "blob:"],
    "frame-src": ["'self'", ...previewSources(options.host), ...WEBCONTAINER],
    "media-src": ["'self'", "data:", "blob:"],
    "manifest-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'self'"],
  };
  return Object.entries(directives)
    .map(([name, sources]) => `${name} ${sources.join(" ")}`)
    .join("; ");
}

/** Gives an answer that Next renders its own nonce: the response's policy names it, and the
 *  request's CSP header (whatever the client sent there is replaced) is where Next reads it. */
export function nonceForPage(req: IncomingMessage, res: ServerResponse, dev: boolean): string {
  const nonce = randomBytes(18).toString("base64");
  const policy = pageContentSecurityPolicy({ host: req.headers.host, dev, nonce });
  delete req.headers["content-security-policy-report-only"];
  req.headers["content-security-policy"] = policy;
  res.setHeader("content-security-policy", policy);
  return nonce;
}
