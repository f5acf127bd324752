// Read-only share links of a session: create (the token is in the answer, once), list, revoke.
// Thin: the share service checks who may and writes the audit events.
import { z } from "zod";
import { MAX_EXPIRY_MINUTES, ShareError } from "../../services/shares";
import { memberProcedure, router, serviceErrors } from "../trpc";

const guard = serviceErrors(ShareError, (e) => ({ code: e.code }));

export const sharesRouter = router({
  create: memberProcedure
    .input(z.object({ sessionId: z.string().min(1), expiresInMinutes: z.number().int().min(1).max(MAX_EXPIRY_MINUTES).optional() }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.shares.create(ctx.actor, input.sessionId, { expiresInMinutes: input.expiresInMinutes }))),
  list: memberProcedure
    .input(z.object({ sessionId: z.string().min(1) }))
    .query(({ ctx, input }) => guard(() => ctx.services.shares.list(ctx.actor, input.sessionId))),
  revoke: memberProcedure
    .input(z.object({ linkId: z.string().min(1) }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.shares.revoke(ctx.actor, input.linkId))),
});
