// Org policy: the rules in force, their history, and (admins) a new version. Thin: validation,
// versioning and audit live in services/policies.
import { z } from "zod";
import { PolicyError } from "../../services/policies";
import { orgProcedure, router, serviceErrors } from "../trpc";
import { ModeError, forbidModes, forbiddenModes } from "../../services/session-modes";

const guard = serviceErrors(PolicyError, (e) => ({ code: e.code }));
const modeGuard = serviceErrors(ModeError, (e) => ({ code: e.code }));

export const policiesRouter = router({
  /** The rules in force, and whether the asker may change them (admins and owners). */
  current: orgProcedure("policy.read").query(async ({ ctx }) => ({
    ...(await guard(() => ctx.services.policies.current(ctx.actor))),
    canEdit: ctx.actor.role !== "member",
  })),

  history: orgProcedure("policy.read")
    .input(z.object({ limit: z.number().int().min(1).max(100).optional() }).optional())
    .query(({ ctx, input }) => guard(() => ctx.services.policies.history(ctx.actor, { limit: input?.limit }))),

  /** `rules` is checked by the service so a bad rule gets its exact path in the error. */
  set: orgProcedure("policy.write")
    .input(
      z.object({ rules: z.array(z.unknown()).max(1000), expectedVersion: z.number().int().nonnegative().optional() }),
    )
    .mutation(({ ctx, input }) =>
      guard(() => ctx.services.policies.set(ctx.actor, input.rules, { expectedVersion: input.expectedVersion })),
    ),

  /** Session modes the org forbids (policy/modes.ts); "ask" never is. */
  modes: orgProcedure("policy.read").query(async ({ ctx }) => ({
    forbidden: await forbiddenModes(ctx.services.db, ctx.actor),
    canEdit: ctx.actor.role !== "member",
  })),

  /** Sessions in a newly forbidden mode fall back to ask at their next call. */
  setForbiddenModes: orgProcedure("policy.write")
    .input(z.object({ forbidden: z.array(z.string()).max(3) }))
    .mutation(({ ctx, input }) => modeGuard(() => forbidModes(ctx.services.db, ctx.actor, input.forbidden))),
});
