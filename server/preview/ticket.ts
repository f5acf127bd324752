// Preview tickets and the preview host's own cookie (server/protocol/preview-ticket.ts says the
// flow). The IDE's cookies are host-only and never reach `<port>-<session>.localhost`, so an owner
// signed in from another machine gets into a preview with a ticket: HMAC-signed (a key derived
// from the cookie key), naming one session and port, valid for a minute and once: used nonces are
// kept until they expire, in the database (UsedPreviewTicket), so with several server instances
// a ticket still works once in all.
// Redeemed, it becomes a cookie on that preview host only, naming the same session and port, and
// the person it was minted for: their device and membership must still hold at each request.
import type { IncomingMessage } from "node:http";
import type { Db } from "../db";
import { newToken, sign, verify } from "../auth/crypto";
import { readCookie, viaHttps } from "../auth/cookies";
import type { PreviewTarget } from "../protocol/preview";

export const PREVIEW_COOKIE = "quiver_preview";

/** Who a ticket, then the cookie, admits: the signed-in person's device and membership as they
 *  were when the IDE asked (checked again on every request: removed, signed out or changed, the
 *  cookie stops working); null for the local owner, who has no device (accounts off). */
export interface PreviewHolder {
  authSessionId: string;
  userId: string;
  orgId: string;
  role: string;
}
const NOBODY = "-";
const holderParts = (h: PreviewHolder | null) =>
  h ? [h.authSessionId, h.userId, h.orgId, h.role] : [NOBODY, NOBODY, NOBODY, NOBODY];
const holderOf = (parts: string[]): PreviewHolder | null =>
  parts[0] === NOBODY ? null : { authSessionId: parts[0], userId: parts[1], orgId: parts[2], role: parts[3] };

export type TicketRefusal = "invalid" | "expired" | "used" | "elsewhere";

export const TICKET_REFUSALS: Record<TicketRefusal, string> = {
  invalid: "This preview ticket is not valid.",
  expired: "This preview ticket has expired (tickets last a minute).",
  used: "This preview ticket was already used.",
  elsewhere: "This preview ticket is for another session or port.",
};

/** Where used tickets are remembered until they expire. */
export interface UsedTickets {
  /** True for the first claim of a nonce, false for any later one. */
  claim(nonce: string, expiresAt: number): Promise<boolean>;
}

/** In this process only (tests; a lone server could use it too). */
export function memoryUsedTickets(now: () => number = Date.now): UsedTickets {
  const used = new Map<string, number>();
  return {
    async claim(nonce, expiresAt) {
      const t = now();
      for (const [n, until] of used) if (until <= t) used.delete(n);
      if (used.has(nonce)) return false;
      used.set(nonce, expiresAt);
      return true;
    },
  };
}

/** In the database, shared by every server instance on it: the nonce is the primary key. */
export function dbUsedTickets(db: Db, now: () => number = Date.now): UsedTickets {
  let swept = 0;
  return {
    async claim(nonce, expiresAt) {
      // Expired rows go at most once a minute, off the redeem's path.
      if (now() - swept > 60_000) {
        swept = now();
        void db.usedPreviewTicket.deleteMany({ where: { expiresAt: { lt: new Date(swept) } } }).catch(() => undefined);
      }
      try {
        await db.usedPreviewTicket.create({ data: { nonce, expiresAt: new Date(expiresAt) } });
        return true;
      } catch (err) {
        if ((err as { code?: string }).code === "P2002") return false;
        throw err;
      }
    },
  };
}

export interface PreviewTicketsDeps {
  /** The preview's key (auth.previewKey). */
  key: Buffer;
  /** Default: this process's memory. */
  used?: UsedTickets;
  ticketMs?: number;
  cookieMs?: number;
  now?: () => number;
}

export function createPreviewTickets(deps: PreviewTicketsDeps) {
  const now = deps.now ?? Date.now;
  const ticketMs = deps.ticketMs ?? 60_000;
  const cookieMs = deps.cookieMs ?? 12 * 3_600_000;
  const used = deps.used ?? memoryUsedTickets(now);

  return {
    /** A fresh ticket for a session's port (the caller has checked it is the owner asking). */
    mint(sessionId: string, port: number, holder: PreviewHolder | null): { ticket: string; expiresAt: number } {
      const expiresAt = now() + ticketMs;
      return {
        ticket: sign(deps.key, [
          "ticket",
          sessionId,
          String(port),
          String(expiresAt),
          newToken(12),
          ...holderParts(holder),
        ]),
        expiresAt,
      };
    },

    /** Checks a ticket for this preview host, and uses it up. */
    async redeem(
      ticket: string,
      target: PreviewTarget,
    ): Promise<{ ok: true; holder: PreviewHolder | null } | { ok: false; reason: TicketRefusal }> {
      const parts = verify(deps.key, ticket, 9);
      if (!parts || parts[0] !== "ticket") return { ok: false, reason: "invalid" };
      const [, sessionId, port, expires, nonce, ...holder] = parts;
      const expiresAt = Number(expires);
      if (sessionId !== target.sessionId || port !== String(target.port)) return { ok: false, reason: "elsewhere" };
      if (!Number.isFinite(expiresAt) || expiresAt <= now()) return { ok: false, reason: "expired" };
      return (await used.claim(nonce, expiresAt))
        ? { ok: true, holder: holderOf(holder) }
        : { ok: false, reason: "used" };
    },

    /**
     * The Set-Cookie of a redeemed ticket, host-only on the preview host. The IDE is another site
     * (`localhost` vs `8000-x.localhost`), so the framed preview only sends a SameSite=None cookie,
     * which must be Secure; browsers take Secure cookies over http from *.localhost. A preview at a
     * real name over http (`8000-x.ide.example.com`) is the IDE's site: Lax works there.
     */
    cookie(req: IncomingMessage, target: PreviewTarget, holder: PreviewHolder | null): string {
      const expiresAt = now() + cookieMs;
      const value = sign(deps.key, [
        "preview",
        target.sessionId,
        String(target.port),
        String(expiresAt),
        ...holderParts(holder),
      ]);
      const cross = viaHttps(req) || target.base === "localhost" || target.base.endsWith(".localhost");
      return [
        `${PREVIEW_COOKIE}=${value}`,
        "Path=/",
        "HttpOnly",
        `Max-Age=${Math.floor(cookieMs / 1000)}`,
        ...(cross ? ["SameSite=None", "Secure"] : ["SameSite=Lax"]),
      ].join("; ");
    },

    /** Whom this preview host's live cookie on the request admits; undefined: no such cookie. */
    admits(req: IncomingMessage, target: PreviewTarget): { holder: PreviewHolder | null } | undefined {
      const value = readCookie(req, PREVIEW_COOKIE);
      const parts = value ? verify(deps.key, value, 8) : null;
      const live =
        !!parts &&
        parts[0] === "preview" &&
        parts[1] === target.sessionId &&
        parts[2] === String(target.port) &&
        Number(parts[3]) > now();
      return live ? { holder: holderOf(parts.slice(4)) } : undefined;
    },
  };
}

export type PreviewTickets = ReturnType<typeof createPreviewTickets>;

/** A Cookie header without the preview's own cookie: the app never sees it. Undefined if nothing is left. */
export function withoutPreviewCookie(header: string): string | undefined {
  const kept = header.split(";").filter((pair) => pair.split("=")[0].trim() !== PREVIEW_COOKIE);
  const out = kept.map((p) => p.trim()).join("; ");
  return out || undefined;
}
