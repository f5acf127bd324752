// Read-only share links of a session: create (the token is shown once, only its hash is kept),
// list, revoke, and the checks a request with a link or a viewer cookie goes through. Only the
// session's owner or an admin/owner of its org manage its links; creating and revoking are
// audit events. Revocation is told to `onRevoked` at once so live viewers are dropped. A link is
// its maker's grant: when they leave the org or are removed from it, every link they made there
// is revoked (`revokeMadeBy`, from services/orgs-work.ts), on their sessions and others' alike,
// and every check reads a link as revoked unless it was made during its maker's present
// membership, so no crash between those writes leaves one working.
import { randomBytes } from "node:crypto";
import type { Db } from "../db";
import { hashToken, newToken, sameText } from "../auth/crypto";
import type { Actor } from "./types";

export class ShareError extends Error {
  constructor(
    message: string,
    readonly code: "NOT_FOUND" | "FORBIDDEN" | "BAD_REQUEST",
  ) {
    super(message);
  }
}

export type LinkState = "active" | "expired" | "revoked";

export interface ShareLinkSummary {
  id: string;
  sessionId: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  state: LinkState;
}

/** What a token or a viewer cookie resolves to. */
export type LinkCheck =
  | { ok: true; linkId: string; sessionId: string; expiresAt: Date | null }
  | { ok: false; reason: "unknown" | "expired" | "revoked" };

/** Longest expiry a link may be given (one year), in minutes. */
export const MAX_EXPIRY_MINUTES = 365 * 24 * 60;

type Row = {
  id: string;
  sessionId: string;
  tokenHash: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
};

export function createShareService(db: Db, opts: { onRevoked?(linkId: string): void; now?: () => Date } = {}) {
  const now = opts.now ?? (() => new Date());
  const stateOf = (row: Row): LinkState =>
    row.revokedAt ? "revoked" : row.expiresAt && row.expiresAt <= now() ? "expired" : "active";
  const summary = (row: Row): ShareLinkSummary => ({
    id: row.id,
    sessionId: row.sessionId,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
    state: stateOf(row),
  });
  const check = (row: Row | null, makerMember: boolean): LinkCheck => {
    if (!row) return { ok: false, reason: "unknown" };
    const state = makerMember ? stateOf(row) : "revoked";
    return state === "active"
      ? { ok: true, linkId: row.id, sessionId: row.sessionId, expiresAt: row.expiresAt }
      : { ok: false, reason: state };
  };
  const withMaker = { session: { select: { orgId: true } } } as const;
  type MadeRow = Row & { createdById: string; session: { orgId: string } };
  /**
   * The links among `rows` made during their maker's present membership of the session's org. A
   * link is its maker's grant: one whose maker is gone reads as revoked even where the revocation
   * written with the removal never came (a link made while they were being removed, the server
   * killed), and a later invitation back does not revive it.
   */
  async function makersIn(rows: MadeRow[]): Promise<Set<string>> {
    if (rows.length === 0) return new Set();
    const pairs = rows.map((r) => ({ userId: r.createdById, orgId: r.session.orgId }));
    const members = await db.membership.findMany({
      where: { OR: pairs },
      select: { userId: true, orgId: true, createdAt: true },
    });
    const since = new Map(members.map((m) => [`${m.userId}\u0000${m.orgId}`, m.createdAt.getTime()]));
    const granted = (r: MadeRow) =>
      (since.get(`${r.createdById}\u0000${r.session.orgId}`) ?? Infinity) <= r.createdAt.getTime();
    return new Set(rows.filter(granted).map((r) => r.id));
  }
  const checked = async (row: MadeRow | null) => check(row, !!row && (await makersIn([row])).has(row.id));

  /** The session, if the actor may manage its links (its owner, or an admin/owner of its org). */
  async function manageable(actor: Actor, sessionId: string) {
    const session = await db.session.findFirst({
      where: { id: sessionId, orgId: actor.orgId },
      select: { id: true, ownerId: true, orgId: true },
    });
    if (!session) throw new ShareError(`No session ${sessionId}.`, "NOT_FOUND");
    if (session.ownerId !== actor.userId && actor.role === "member")
      throw new ShareError("Only the session's owner or an org admin can manage its share links.", "FORBIDDEN");
    return session;
  }

  /** Revokes these links (those already revoked stay as they were) with an audit row each, made by
   *  nobody in particular (`detail` says why); their viewers are dropped. */
  async function revokeRows(rows: Array<{ id: string; sessionId: string }>, orgId: string, detail: object) {
    if (rows.length === 0) return;
    await db.$transaction([
      db.shareLink.updateMany({
        where: { id: { in: rows.map((r) => r.id) }, revokedAt: null },
        data: { revokedAt: now() },
      }),
      db.auditEvent.createMany({
        data: rows.map((r) => ({
          orgId,
          sessionId: r.sessionId,
          actorId: null,
          action: "share.revoked",
          target: `share:${r.id}`,
          detail: { ...detail },
        })),
      }),
    ]);
    for (const r of rows) opts.onRevoked?.(r.id);
  }

  return {
    /** A new read-only link; the token is in the answer only, never stored. */
    async create(
      actor: Actor,
      sessionId: string,
      input: { expiresInMinutes?: number } = {},
    ): Promise<ShareLinkSummary & { token: string }> {
      const minutes = input.expiresInMinutes;
      if (minutes !== undefined && (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_EXPIRY_MINUTES)) {
        throw new ShareError(`expiresInMinutes must be a whole number from 1 to ${MAX_EXPIRY_MINUTES}.`, "BAD_REQUEST");
      }
      const session = await manageable(actor, sessionId);
      const token = newToken(16);
      const expiresAt = minutes === undefined ? null : new Date(now().getTime() + minutes * 60_000);
      // The id is made here so the audit row in the same transaction can name the link.
      const id = `sl${randomBytes(12).toString("hex")}`;
      const [row] = await db.$transaction([
        db.shareLink.create({
          data: { id, sessionId, tokenHash: hashToken(token), scope: "read", createdById: actor.userId, expiresAt },
        }),
        db.auditEvent.create({
          data: {
            orgId: session.orgId,
            sessionId,
            actorId: actor.userId,
            action: "share.created",
            target: `share:${id}`,
            detail: { expiresAt: expiresAt?.toISOString() ?? null },
          },
        }),
      ]);
      // Made while its maker was being removed from the org: their removal's revocation may have
      // run before this row was written, so the link checks for itself and goes with them.
      if ((await db.membership.count({ where: { userId: actor.userId, orgId: session.orgId } })) === 0) {
        await revokeRows([{ id, sessionId }], session.orgId, {
          reason: "maker not in the org",
          createdBy: actor.userId,
        });
        throw new ShareError("You are no longer a member of this org.", "FORBIDDEN");
      }
      return { ...summary(row), token };
    },

    async list(actor: Actor, sessionId: string): Promise<ShareLinkSummary[]> {
      await manageable(actor, sessionId);
      const rows = await db.shareLink.findMany({ where: { sessionId }, orderBy: { createdAt: "desc" }, take: 200 });
      return rows.map(summary);
    },

    /** Revokes a link (again: no change). Viewers using it are dropped at once. */
    async revoke(actor: Actor, linkId: string): Promise<ShareLinkSummary> {
      const row = await db.shareLink.findUnique({ where: { id: linkId } });
      if (!row) throw new ShareError(`No share link ${linkId}.`, "NOT_FOUND");
      const session = await manageable(actor, row.sessionId);
      if (row.revokedAt) return summary(row);
      const [updated] = await db.$transaction([
        db.shareLink.update({ where: { id: linkId }, data: { revokedAt: now() } }),
        db.auditEvent.create({
          data: {
            orgId: session.orgId,
            sessionId: row.sessionId,
            actorId: actor.userId,
            action: "share.revoked",
            target: `share:${linkId}`,
            detail: {},
          },
        }),
      ]);
      opts.onRevoked?.(linkId);
      return summary(updated);
    },

    /** Revokes the active links `userId` made on the org's sessions, whoever owns them: the
     *  person left the org or was removed from it, and a link was their grant. Answers their ids. */
    async revokeMadeBy(who: { userId: string; orgId: string }): Promise<string[]> {
      const rows = await db.shareLink.findMany({
        where: { createdById: who.userId, revokedAt: null, session: { orgId: who.orgId } },
        select: { id: true, sessionId: true },
      });
      await revokeRows(rows, who.orgId, { reason: "maker left the org", createdBy: who.userId });
      return rows.map((r) => r.id);
    },

    /** Links revoked elsewhere (with their maker's membership, orgs-store.ts): their viewers go. */
    dropViewers(linkIds: string[]): void {
      for (const id of linkIds) opts.onRevoked?.(id);
    },

    /** A token from a `/share/<token>` URL. */
    async resolveToken(token: string): Promise<LinkCheck> {
      if (!/^[A-Za-z0-9_-]{16,64}$/.test(token)) return { ok: false, reason: "unknown" };
      const hash = hashToken(token);
      const row = await db.shareLink.findUnique({ where: { tokenHash: hash }, include: withMaker });
      // The lookup is by hash; the comparison still runs in constant time.
      return checked(row && sameText(row.tokenHash, hash) && row.scope === "read" ? row : null);
    },

    /** A viewer cookie's link, checked again on every request (revocation is immediate). */
    async checkLink(linkId: string, sessionId: string): Promise<LinkCheck> {
      const row = await db.shareLink.findUnique({ where: { id: linkId }, include: withMaker });
      return checked(row && row.sessionId === sessionId ? row : null);
    },

    /** Links among `ids` that are no longer active (live viewers are re-checked with this). */
    async ended(ids: string[]): Promise<Array<{ id: string; reason: "unknown" | "expired" | "revoked" }>> {
      if (ids.length === 0) return [];
      const found = await db.shareLink.findMany({ where: { id: { in: ids } }, include: withMaker });
      const rows = new Map(found.map((r) => [r.id, r]));
      const granted = await makersIn(found);
      return ids.flatMap((id) => {
        const row = rows.get(id);
        const state = !row ? "unknown" : granted.has(id) ? stateOf(row) : "revoked";
        return state === "active" ? [] : [{ id, reason: state }];
      });
    },
  };
}

export type ShareService = ReturnType<typeof createShareService>;
