// The org's audit trail for its owners and admins (app/settings/audit): pages of events with
// filters (person, kind or area, date range) and the filters' choices. The JSON Lines export is
// an HTTP download (services/audit-export.ts), decided by the same authorization.
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { createAuditService, AUDIT_PAGE_MAX, type AuditFilter } from "../../services/audit";
import { orgProcedure, router } from "../trpc";

/** A day (YYYY-MM-DD, UTC) or an ISO date-time. */
const when = z
  .string()
  .trim()
  .max(40)
  .regex(/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/, "a date: YYYY-MM-DD or an ISO date-time");

export const AuditFilterInput = z.object({
  person: z.string().trim().min(1).max(100).optional(),
  kind: z
    .string()
    .trim()
    .regex(/^[a-z0-9_.]{1,100}$/, "a kind (org.role_changed) or an area (org)")
    .optional(),
  from: when.optional(),
  /** Inclusive: a day means up to its end. */
  to: when.optional(),
});

/** The filter as the service takes it; a bad date is BAD_REQUEST. */
export function auditFilterOf(input: z.infer<typeof AuditFilterInput>): AuditFilter {
  const date = (s: string | undefined, endOfDay: boolean): Date | undefined => {
    if (!s) return undefined;
    const day = /^\d{4}-\d{2}-\d{2}$/.test(s);
    const d = new Date(day ? `${s}T00:00:00Z` : s);
    if (Number.isNaN(d.getTime())) throw new TRPCError({ code: "BAD_REQUEST", message: `Not a date: ${s}` });
    return day && endOfDay ? new Date(d.getTime() + 86_400_000) : d;
  };
  return { actorId: input.person, kind: input.kind, from: date(input.from, false), to: date(input.to, true) };
}

export const auditRouter = router({
  list: orgProcedure("audit.read")
    .input(
      AuditFilterInput.extend({
        after: z.string().trim().min(1).max(100).optional(),
        limit: z.number().int().min(1).max(AUDIT_PAGE_MAX).optional(),
      }),
    )
    .query(({ ctx, input }) =>
      createAuditService(ctx.services.db).page(ctx.actor.orgId, auditFilterOf(input), {
        after: input.after,
        limit: input.limit,
      }),
    ),
  facets: orgProcedure("audit.read").query(({ ctx }) => createAuditService(ctx.services.db).facets(ctx.actor.orgId)),
});
