// Approvals: the pending cards of a session (page reload) and the person's answer: once, for
// the session, or reject with an optional message to the model. Thin: the pipeline decides.
import { z } from "zod";
import { ApprovalError } from "../../pipeline/approvals";
import { memberProcedure, router, serviceErrors } from "../trpc";

const CODES = { NOT_FOUND: "NOT_FOUND", FORBIDDEN: "FORBIDDEN", CONFLICT: "CONFLICT" } as const;

const approvalsProcedure = memberProcedure.use(({ ctx, next }) => {
  return next({ ctx: { ...ctx, approvals: ctx.services.approvals } });
});

const guard = serviceErrors(ApprovalError, (e) => ({ code: CODES[e.code] }));

export const approvalsRouter = router({
  pending: approvalsProcedure
    .input(z.object({ sessionId: z.string().min(1) }))
    .query(({ ctx, input }) => guard(() => ctx.approvals.pendingApprovals(ctx.actor, input.sessionId))),

  answer: approvalsProcedure
    .input(
      z.object({
        approvalId: z.string().min(1),
        choice: z.enum(["once", "session", "reject"]),
        /** Said to the model with a rejection (or alongside an approval). */
        message: z.string().max(4000).optional(),
      }),
    )
    .mutation(({ ctx, input }) => guard(() => ctx.approvals.answerApproval(ctx.actor, input.approvalId, input.choice, input.message))),
});
