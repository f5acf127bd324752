"use client";
// The frame's way into a preview host: a preview host never gets the IDE's cookies, so before each
// load the pane asks the IDE's host for a one-minute ticket (POST /api/preview/ticket) and frames
// the URL with it; the preview host swaps it for a cookie of its own and drops it from the URL
// (server/preview/entry.ts). This is what lets an owner signed in from another machine preview.
import { useEffect, useState } from "react";
import { PreviewTicket, withTicket } from "../../../server/protocol/preview-ticket";

export async function fetchTicket(sessionId: string, port: number, signal?: AbortSignal): Promise<string> {
  const res = await fetch(`/api/preview/ticket?session=${encodeURIComponent(sessionId)}&port=${port}`, {
    method: "POST",
    signal,
    cache: "no-store",
  });
  const body: unknown = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error((body as { error?: string }).error ?? `HTTP ${res.status}`);
  return PreviewTicket.parse(body).ticket;
}

/**
 * The frame's src for `url` (origin + path), with a fresh ticket for every load (`load` changes on
 * reload); undefined while the ticket is on its way. Without a ticket the plain URL is framed: the
 * preview host then says itself why it refuses (or lets the owner on this machine in).
 */
export function useTicketedSrc(
  sessionId: string,
  port: number | null,
  url: string | undefined,
  load: number,
): string | undefined {
  const [src, setSrc] = useState<{ for: string; src: string }>();
  const key = `${url}#${load}`;
  useEffect(() => {
    if (!url || port === null) return;
    const ctrl = new AbortController();
    const path = url.slice(new URL(url).origin.length);
    fetchTicket(sessionId, port, ctrl.signal).then(
      (ticket) => setSrc({ for: key, src: new URL(url).origin + withTicket(path, ticket) }),
      () => !ctrl.signal.aborted && setSrc({ for: key, src: url }),
    );
    return () => ctrl.abort();
  }, [sessionId, port, url, key]);
  return src?.for === key ? src.src : undefined;
}

/** The "open in a new tab" link: the IDE's host redirects to the preview with a fresh ticket. */
export const openInTabHref = (sessionId: string, port: number, path: string): string =>
  `/api/preview/open?session=${encodeURIComponent(sessionId)}&port=${port}&path=${encodeURIComponent(path)}`;
