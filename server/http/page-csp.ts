// The Content-Security-Policy of every answer of Quiver's own host (pages, tRPC, uploads): the
// browser's last line when something the agent wrote (chat, tool cards, file names, terminal)
// slips past a renderer. Nothing is fetched, framed or run from a host off this machine, so a
// model-chosen URL in an <img>, CSS url() or prefetch carries nothing out, and no site may frame
// the IDE's approve buttons.
// Scripts keep 'unsafe-inline': Next's App Router streams its payload in inline <script> tags
// and only nonces (a proxy that renders every page dynamically) would avoid it; React never
// renders model text as HTML, and the strict img/connect/frame lists bound what an injected
// script could send. The dev server's hot reload needs eval.

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

export function pageContentSecurityPolicy(options: { host: string | undefined; dev: boolean }) {
  const directives: Record<string, string[]> = {
    "default-src": ["'self'"],
    "script-src": ["'self'", "'unsafe-inline'", ...(options.dev ? ["'unsafe-eval'"] : [])],
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
