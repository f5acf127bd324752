// Sessions: list, create, read (a share-link viewer reads its own session), rename, delete,
// the model a session talks to and the choices this server offers. Logic lives in
// services/sessions and the engine.
import { z } from "zod";
import { memberProcedure, router, serviceErrors, sessionProcedure, sessionReadProcedure } from "../trpc";
import { Mode } from "../../policy/modes";
import { ModeError, acceptPlan, modeFor, setMode } from "../../services/session-modes";

const modeGuard = serviceErrors(ModeError, (e) => ({ code: e.code }));

export const sessionsRouter = router({
  list: memberProcedure
    .input(z.object({ projectId: z.string().min(1).max(100).optional() }).optional())
    .query(({ ctx, input }) => ctx.services.sessions.list(ctx.actor, { projectId: input?.projectId })),
  create: memberProcedure
    // In a project of the person's org (none: its Default project); the session works in the person's workspace of it.
    .input(
      z
        .object({
          title: z.string().trim().min(1).max(200).optional(),
          projectId: z.string().min(1).max(100).optional(),
        })
        .optional(),
    )
    .mutation(({ ctx, input }) =>
      ctx.services.sessions.create(ctx.actor, { title: input?.title, projectId: input?.projectId }),
    ),
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
    .mutation(({ ctx, input }) =>
      ctx.services.sessions.setModel(ctx.actor, input.id, { provider: input.provider, model: input.model }),
    ),
  models: memberProcedure.query(({ ctx }) => ctx.services.engine.modelChoices()),
  /** A provider's models from its own list (cached briefly); empty with `error` when unreadable. */
  modelList: memberProcedure
    .input(z.object({ provider: z.enum(["anthropic", "openai"]) }))
    .query(({ ctx, input }) => ctx.services.sessions.listModels(input.provider)),
  /** Tokens and dollars per turn and for the whole session (services/session-cost.ts). */
  cost: sessionReadProcedure("id")
    .input(z.object({ id: z.string().min(1) }))
    .query(({ ctx, input }) => ctx.services.sessions.cost(input.id)),
  /** The session's mode (policy/modes.ts) and the modes its org forbids. */
  mode: sessionProcedure("session.inspect")
    .input(z.object({ sessionId: z.string().min(1) }))
    .query(
      async ({ ctx, input }) =>
        (await modeFor(ctx.services.db, input.sessionId, undefined, ctx.services.dbProvider)) ?? {
          mode: "ask" as const,
          forbidden: [],
        },
    ),
  /** Switches the mode; a mode the org forbids is refused. Every open tab follows (session.mode). */
  setMode: sessionProcedure("session.write")
    .input(z.object({ sessionId: z.string().min(1), mode: Mode }))
    .mutation(({ ctx, input }) =>
      modeGuard(() =>
        setMode(ctx.services.db, ctx.actor, input.sessionId, input.mode, (id, e) =>
          ctx.services.hub.publish(id, e).then(() => undefined),
        ),
      ),
    ),
  /** "Accept and implement" on exit_plan_mode's card: switches to `mode`, then approves the card. */
  acceptPlan: sessionProcedure("session.write")
    .input(z.object({ sessionId: z.string().min(1), approvalId: z.string().min(1), mode: Mode }))
    .mutation(({ ctx, input }) =>
      modeGuard(() =>
        acceptPlan(
          ctx.services.db,
          (id) => ctx.services.approvals.answerApproval(ctx.actor, id, "once"),
          ctx.actor,
          input.sessionId,
          input.approvalId,
          input.mode,
          (id, e) => ctx.services.hub.publish(id, e).then(() => undefined),
        ),
      ),
    ),
  get: sessionReadProcedure("id")
    .input(z.object({ id: z.string().min(1) }))
    .query(({ ctx, input }) =>
      ctx.actor ? ctx.services.sessions.get(ctx.actor, input.id) : ctx.services.sessions.getShared(input.id),
    ),
});
