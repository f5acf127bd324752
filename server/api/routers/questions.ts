// Questions: the answer to ask_user's card, by the session's creator only (an option by its
// index, or typed text). Thin: the service and the pipeline do the rest.
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { ApprovalError } from "../../pipeline/contract";
import { EngineError } from "../../engine/engine";
import { QuestionAnswer } from "../../protocol/todos-questions";
import { answerQuestion } from "../../services/questions";
import { router, serviceErrors, sessionProcedure } from "../trpc";

const CODES = { NOT_FOUND: "NOT_FOUND", FORBIDDEN: "FORBIDDEN", CONFLICT: "CONFLICT" } as const;
const guard = serviceErrors(ApprovalError, (e) => ({ code: CODES[e.code] }));

export const questionsRouter = router({
  answer: sessionProcedure("session.write")
    .input(z.object({ sessionId: z.string().min(1), callId: z.string().min(1), answer: QuestionAnswer }))
    .mutation(({ ctx, input }) =>
      guard(async () => {
        try {
          return await answerQuestion(ctx.services, ctx.actor, input);
        } catch (err) {
          if (err instanceof EngineError)
            throw new TRPCError({ code: err.code === "busy" ? "CONFLICT" : "BAD_REQUEST", message: err.message });
          throw err;
        }
      }),
    ),
});
