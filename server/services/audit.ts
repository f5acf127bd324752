// The audit trail: who did what, in which org. Every event names the person who did it
// (`actorId`; null only when nobody is known, e.g. a failed sign-in for an address with no account,
// which then says the address in `detail`). Writers call record() (or put auditRow() in the
// transaction of the change it records, so a change is never kept without its event); the admin
// page (app/settings/audit) reads pages of them and exports them as JSON Lines.
//
// Kinds are "area.verb" strings, e.g. auth.signed_in, auth.sign_in_failed, org.invitation_created,
// org.role_changed, org.member_removed, policy.set, share.created, share.revoked, tool.rejected,
// tool.approved_once, tool.policy_deny (the pipeline's decisions are `tool.<decision>`).
import type { Db } from "../db";

export const AUDIT_KIND = /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_.]*$/;
export const AUDIT_PAGE_MAX = 200;

export interface AuditInput {
  /** The person who did it; null only when nobody is known (say who was claimed in `detail`). */
  actorId: string | null;
  /** "area.verb" (AUDIT_KIND). */
  action: string;
  orgId?: string | null;
  sessionId?: string | null;
  /** What it was done to, "kind:id" (share:sl…, member:…, invitation:…, policy:v3). */
  target?: string | null;
  detail?: Record<string, unknown>;
}

/** The arguments of `db.auditEvent.create` for one event (for a `$transaction([...])`). */
export function auditRow(e: AuditInput) {
  if (!AUDIT_KIND.test(e.action)) throw new Error(`audit: "${e.action}" is not an area.verb kind`);
  return {
    data: {
      orgId: e.orgId ?? null,
      sessionId: e.sessionId ?? null,
      actorId: e.actorId,
      action: e.action,
      target: e.target ?? null,
      detail: JSON.parse(JSON.stringify(e.detail ?? {})) as object,
    },
  };
}

export interface AuditFilter {
  /** Events by this person. */
  actorId?: string;
  /** An exact kind ("org.role_changed") or an area ("org", "tool"): every kind in it. */
  kind?: string;
  /** createdAt from (inclusive) and to (exclusive). */
  from?: Date;
  to?: Date;
}

export interface AuditEventView {
  id: string;
  at: string;
  action: string;
  actor: { id: string; name: string; email: string } | null;
  /** The actor id as stored, when no such user is left. */
  actorId: string | null;
  sessionId: string | null;
  target: string | null;
  detail: unknown;
}

function where(orgId: string, f: AuditFilter) {
  const kind = f.kind ? (f.kind.includes(".") ? { action: f.kind } : { action: { startsWith: `${f.kind}.` } }) : {};
  const createdAt =
    f.from || f.to ? { createdAt: { ...(f.from ? { gte: f.from } : {}), ...(f.to ? { lt: f.to } : {}) } } : {};
  return { orgId, ...(f.actorId ? { actorId: f.actorId } : {}), ...kind, ...createdAt };
}

const ORDER = [{ createdAt: "desc" as const }, { id: "desc" as const }];

export function createAuditService(db: Db) {
  async function withPeople(
    rows: Array<{
      id: string;
      createdAt: Date;
      action: string;
      actorId: string | null;
      sessionId: string | null;
      target: string | null;
      detail: unknown;
    }>,
  ): Promise<AuditEventView[]> {
    const ids = [...new Set(rows.map((r) => r.actorId).filter((id): id is string => !!id))];
    const users = ids.length
      ? await db.user.findMany({ where: { id: { in: ids } }, select: { id: true, name: true, email: true } })
      : [];
    const byId = new Map(users.map((u) => [u.id, u]));
    return rows.map((r) => ({
      id: r.id,
      at: r.createdAt.toISOString(),
      action: r.action,
      actor: (r.actorId && byId.get(r.actorId)) || null,
      actorId: r.actorId,
      sessionId: r.sessionId,
      target: r.target,
      detail: r.detail,
    }));
  }

  /** One page, newest first; `after` is the last id of the page before. */
  async function page(orgId: string, filter: AuditFilter, opts: { after?: string; limit?: number } = {}) {
    const limit = Math.min(Math.max(opts.limit ?? 50, 1), AUDIT_PAGE_MAX);
    const rows = await db.auditEvent.findMany({
      where: where(orgId, filter),
      orderBy: ORDER,
      take: limit + 1,
      ...(opts.after ? { cursor: { id: opts.after }, skip: 1 } : {}),
    });
    const more = rows.length > limit;
    const events = await withPeople(rows.slice(0, limit));
    return { events, next: more ? events[events.length - 1].id : null };
  }

  return {
    /** Writes one event (`tx`: a transaction's client, to keep it with the change). */
    async record(e: AuditInput, tx: Pick<Db, "auditEvent"> = db): Promise<void> {
      await tx.auditEvent.create(auditRow(e));
    },
    page,
    /** Every event the filter matches, newest first, one JSON object per line, read a page at a time. */
    async *lines(orgId: string, filter: AuditFilter): AsyncGenerator<string> {
      let after: string | undefined;
      do {
        const p = await page(orgId, filter, { after, limit: AUDIT_PAGE_MAX });
        for (const e of p.events) yield `${JSON.stringify(e)}\n`;
        after = p.next ?? undefined;
      } while (after);
    },
    /** The kinds recorded in the org, and the people named, for the page's filters. */
    async facets(
      orgId: string,
    ): Promise<{ kinds: string[]; people: Array<{ id: string; name: string; email: string }> }> {
      const [kinds, members] = await Promise.all([
        db.auditEvent.groupBy({ by: ["action"], where: { orgId }, orderBy: { action: "asc" } }),
        db.membership.findMany({
          where: { orgId },
          select: { user: { select: { id: true, name: true, email: true } } },
          orderBy: { createdAt: "asc" },
        }),
      ]);
      return { kinds: kinds.map((k) => k.action), people: members.map((m) => m.user) };
    },
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
