// Read-only share links of a session: create (the token is in the answer, once; the session's
// creator), list and revoke (also the org's admins). Thin: authorization decides who, the share
// service writes the audit events.
import { z } from "zod";
import { MAX_EXPIRY_MINUTES, ShareError } from "../../services/shares";
import { byId, resourceProcedure, router, serviceErrors, sessionProcedure } from "../trpc";

const guard = serviceErrors(ShareError, (e) => ({ code: e.code }));

export const sharesRouter = router({
  create: sessionProcedure("share.create")
    .input(
      z.object({
        sessionId: z.string().min(1),
        expiresInMinutes: z.number().int().min(1).max(MAX_EXPIRY_MINUTES).optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      guard(() => ctx.services.shares.create(ctx.actor, input.sessionId, { expiresInMinutes: input.expiresInMinutes })),
    ),
  list: sessionProcedure("session.inspect")
    .input(z.object({ sessionId: z.string().min(1) }))
    .query(({ ctx, input }) => guard(() => ctx.services.shares.list(ctx.actor, input.sessionId))),
  revoke: resourceProcedure("share.revoke", byId.shareLink())
    .input(z.object({ linkId: z.string().min(1) }))
    .mutation(({ ctx, input }) => guard(() => ctx.services.shares.revoke(ctx.actor, input.linkId))),
});
