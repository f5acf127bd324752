// Approvals: the pending cards of a session (page reload; its creator and the org's admins) and
// the answer, by the session's creator only: once, for the session, or reject with an optional
// message to the model. Thin: authorization decides who, the pipeline the rest.
import { z } from "zod";
import { ApprovalError } from "../../pipeline/contract";
import { byId, resourceProcedure, router, serviceErrors, sessionProcedure } from "../trpc";

const CODES = { NOT_FOUND: "NOT_FOUND", FORBIDDEN: "FORBIDDEN", CONFLICT: "CONFLICT" } as const;

const guard = serviceErrors(ApprovalError, (e) => ({ code: CODES[e.code] }));

export const approvalsRouter = router({
  pending: sessionProcedure("session.inspect")
    .input(z.object({ sessionId: z.string().min(1) }))
    .query(({ ctx, input }) => guard(() => ctx.services.approvals.pendingApprovals(ctx.actor, input.sessionId))),

  answer: resourceProcedure("approval.answer", byId.approval())
    .input(
      z.object({
        approvalId: z.string().min(1),
        choice: z.enum(["once", "session", "reject"]),
        /** Said to the model with a rejection (or alongside an approval). */
        message: z.string().max(4000).optional(),
      }),
    )
    .mutation(({ ctx, input }) =>
      guard(() => ctx.services.approvals.answerApproval(ctx.actor, input.approvalId, input.choice, input.message)),
    ),
});
