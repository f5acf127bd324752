// Sessions: list, create, read (a share-link viewer reads its own session), rename, delete,
// the model a session talks to and the choices this server offers. Logic lives in
// services/sessions and the engine.
import { z } from "zod";
import { memberProcedure, router, sessionProcedure, sessionReadProcedure } from "../trpc";

export const sessionsRouter = router({
  list: memberProcedure.query(({ ctx }) => ctx.services.sessions.list(ctx.actor)),
  create: memberProcedure
    // In a project of the person's org (none: its Default project); the session works in the person's workspace of it.
    .input(z.object({ title: z.string().trim().min(1).max(200).optional(), projectId: z.string().min(1).max(100).optional() }).optional())
    .mutation(({ ctx, input }) => ctx.services.sessions.create(ctx.actor, { title: input?.title, projectId: input?.projectId })),
  rename: sessionProcedure("session.write", "id")
    .input(z.object({ id: z.string().min(1), title: z.string().trim().min(1).max(200) }))
    .mutation(({ ctx, input }) => ctx.services.sessions.rename(ctx.actor, input.id, input.title)),
  remove: sessionProcedure("session.write", "id")
    .input(z.object({ id: z.string().min(1) }))
    .mutation(({ ctx, input }) => ctx.services.sessions.remove(ctx.actor, input.id)),
  setModel: sessionProcedure("session.write", "id")
    .input(
      z.object({
        id: z.string().min(1),
        provider: z.enum(["anthropic", "openai"]).nullable(),
        model: z.string().trim().min(1).max(200).nullable(),
      }),
    )
    .mutation(({ ctx, input }) => ctx.services.sessions.setModel(ctx.actor, input.id, { provider: input.provider, model: input.model })),
  models: memberProcedure.query(({ ctx }) => ctx.services.engine.modelChoices()),
  get: sessionReadProcedure("id")
    .input(z.object({ id: z.string().min(1) }))
    .query(({ ctx, input }) => (ctx.actor ? ctx.services.sessions.get(ctx.actor, input.id) : ctx.services.sessions.getShared(input.id))),
});
