// Sessions: list, create, read (a share-link viewer reads its own session), rename, delete.
// Logic lives in services/sessions.
import { z } from "zod";
import { memberProcedure, router, sessionReadProcedure } from "../trpc";

export const sessionsRouter = router({
  list: memberProcedure.query(({ ctx }) => ctx.services.sessions.list(ctx.actor)),
  create: memberProcedure
    .input(z.object({ title: z.string().trim().min(1).max(200).optional() }).optional())
    .mutation(({ ctx, input }) => ctx.services.sessions.create(ctx.actor, { title: input?.title })),
  rename: memberProcedure
    .input(z.object({ id: z.string().min(1), title: z.string().trim().min(1).max(200) }))
    .mutation(({ ctx, input }) => ctx.services.sessions.rename(ctx.actor, input.id, input.title)),
  remove: memberProcedure
    .input(z.object({ id: z.string().min(1) }))
    .mutation(({ ctx, input }) => ctx.services.sessions.remove(ctx.actor, input.id)),
  get: sessionReadProcedure("id")
    .input(z.object({ id: z.string().min(1) }))
    .query(({ ctx, input }) => (ctx.actor ? ctx.services.sessions.get(ctx.actor, input.id) : ctx.services.sessions.getShared(input.id))),
});
