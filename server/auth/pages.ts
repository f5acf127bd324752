// The few plain pages sign-in and share links answer with (no scripts, no outside requests).
import type { ServerResponse } from "node:http";

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function page(
  res: ServerResponse,
  status: number,
  title: string,
  lines: string[],
  headers: Record<string, string | string[]> = {},
): void {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escape(title)} · Quiver</title><style>body{font:15px/1.5 system-ui,sans-serif;max-width:38rem;margin:12vh auto;padding:0 1rem;color:#222}code{background:#eee;padding:0 .25em}</style></head>
<body><h1>${escape(title)}</h1>${lines.map((l) => `<p>${l}</p>`).join("")}</body></html>`;
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...headers });
  res.end(body);
}

/** The same help as plain text, for API errors. */
export const SIGN_IN_TEXT =
  "Not signed in. This Quiver server is reachable from other machines, so its owner signs in: open the sign-in URL that `npm start` printed in the server's console (…/signin?token=…).";

/** The same with accounts on (server/auth/accounts). */
export const ACCOUNT_SIGN_IN_TEXT = "Not signed in. Sign in at /signin.";
export const NO_ORG_TEXT = "You are signed in but a member of no org: ask an org admin for an invitation.";

export const SIGN_IN_HELP =
  "This Quiver server is reachable from other machines, so its owner signs in: open the sign-in URL that <code>npm start</code> printed in the server's console (<code>…/signin?token=…</code>). Each URL works once; the console then prints the next one.";

export function notSignedIn(res: ServerResponse): void {
  page(res, 401, "Sign in to Quiver", [SIGN_IN_HELP]);
}

export const LINK_MESSAGES = {
  unknown: "This share link does not exist. Ask the session's owner for a new one.",
  expired: "This share link has expired. Ask the session's owner for a new one.",
  revoked: "This share link was revoked. Ask the session's owner for a new one.",
} as const;

export function linkEnded(
  res: ServerResponse,
  reason: keyof typeof LINK_MESSAGES,
  headers: Record<string, string | string[]> = {},
): void {
  page(
    res,
    reason === "unknown" ? 404 : 410,
    reason === "unknown" ? "Unknown share link" : "Share link ended",
    [
      escape(LINK_MESSAGES[reason]),
      'This browser is no longer viewing a shared session. <a href="/share/leave">Forget the link</a>.',
    ],
    headers,
  );
}
