// Preview tickets: a preview host (`<port>-<session>.localhost`) never receives the IDE's
// cookies, so the IDE page asks its own host for a short-lived signed ticket (POST
// /api/preview/ticket?session=…&port=…) and loads the preview once with it in the query; the
// preview host checks it, sets a cookie of its own and redirects to the same URL without it
// (server/preview/ticket.ts). A ticket names one session and port, lasts a minute, works once.
import { z } from "zod";

export const PREVIEW_TICKET_PARAM = "__quiver_ticket";

export const PreviewTicket = z.object({ ticket: z.string().min(1).max(512), expiresAt: z.number() });
export type PreviewTicket = z.infer<typeof PreviewTicket>;

/** `path` (origin-form, maybe with a query and a fragment) with the ticket added to its query. */
export function withTicket(path: string, ticket: string): string {
  const hash = path.indexOf("#");
  const [base, fragment] = hash < 0 ? [path, ""] : [path.slice(0, hash), path.slice(hash)];
  return `${base}${base.includes("?") ? "&" : "?"}${PREVIEW_TICKET_PARAM}=${encodeURIComponent(ticket)}${fragment}`;
}

/** A request target's ticket and the target without it; null when it carries none. */
export function takeTicket(target: string): { ticket: string; clean: string } | null {
  const q = target.indexOf("?");
  if (q < 0) return null;
  const params = new URLSearchParams(target.slice(q + 1));
  const ticket = params.get(PREVIEW_TICKET_PARAM);
  if (ticket === null) return null;
  params.delete(PREVIEW_TICKET_PARAM);
  const rest = params.toString();
  return { ticket, clean: target.slice(0, q) + (rest ? `?${rest}` : "") };
}
