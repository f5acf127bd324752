// Upload and workspace-size settings: the org's disk limit per workspace (read by its members,
// set by its owners and admins) and the upload ceiling. The archive itself is uploaded over
// plain HTTP (POST /api/uploads, server/services/uploads-http.ts), streamed, not through tRPC.
import { z } from "zod";
import { DISK_LIMIT_MB_RANGE, diskLimitOf, setDiskLimit } from "../../services/uploads-limits";
import { orgProcedure, router } from "../trpc";

export const uploadsRouter = router({
  /** The disk limit of each workspace of the asker's org, and the upload ceiling. */
  limits: orgProcedure("org.use").query(({ ctx }) => diskLimitOf(ctx.services.db, ctx.actor.orgId)),

  /** null puts the default (5 GB) back. The org's workspaces on runners held by this instance get
   *  the new limit before the answer; those held by other instances at their next renewal. */
  setDiskLimit: orgProcedure("org.admin")
    .input(z.object({ limitMb: z.number().int().min(DISK_LIMIT_MB_RANGE.min).max(DISK_LIMIT_MB_RANGE.max).nullable() }))
    .mutation(async ({ ctx, input }) => {
      const info = await setDiskLimit(ctx.services.db, ctx.actor, input.limitMb);
      const held = ctx.services.runners
        .status()
        .filter((r) => r.connected)
        .map((r) => r.id);
      await ctx.services.placement.syncLimits(held);
      return info;
    }),
});
