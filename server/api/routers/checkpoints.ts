// Checkpoints of a session's workspace and the review of the agent's changes (issue 27): list,
// diff (a turn's, or the session's), Accept or Revert one hunk, restore files to a checkpoint.
// Thin: services/checkpoints.ts acts; authorization decides who (viewers list and diff only).
import { z } from "zod";
import { CheckpointError } from "../../services/checkpoints";
import { redactHunkLines } from "../../auth/redact-lines";
import { router, serviceErrors, sessionProcedure, sessionReadProcedure } from "../trpc";

const session = z.object({ sessionId: z.string().min(1) });
const id = z.string().min(1).max(200);
const path = z.string().min(1).max(4096);
const guard = serviceErrors(CheckpointError, (e) => ({ code: e.code }));

const hunk = session.extend({ turnId: id.optional(), path, hunkId: z.string().regex(/^[0-9a-f]{16}$/) });

export const checkpointsRouter = router({
  list: sessionReadProcedure()
    .input(session)
    .query(({ ctx, input }) => guard(() => ctx.services.checkpoints.list(input.sessionId))),
  /** The agent's changes: of one turn (before → after), or of the session (first before → now). */
  diff: sessionReadProcedure()
    .input(session.extend({ turnId: id.optional() }))
    .query(({ ctx, input }) =>
      guard(async () => {
        const diff = await ctx.services.checkpoints.diff(input.sessionId, input.turnId);
        // A viewer's: each side of a hunk redacted whole, not line by line (a key's body).
        if (!ctx.grant.viewer) return diff;
        const files = diff.files.map((f) => ({
          ...f,
          hunks: f.hunks.map((h) => ({ ...h, lines: redactHunkLines(h.lines) })),
        }));
        return { ...diff, files };
      }),
    ),
  acceptHunk: sessionProcedure("session.write")
    .input(hunk)
    .mutation(({ ctx, input }) =>
      guard(() => ctx.services.checkpoints.acceptHunk(input.sessionId, input.turnId, input.path, input.hunkId)),
    ),
  /** Undoes the hunk in the file as it is now; CONFLICT (nothing changed) when its lines are gone. */
  revertHunk: sessionProcedure("session.write")
    .input(hunk)
    .mutation(({ ctx, input }) =>
      guard(() => ctx.services.checkpoints.revertHunk(input.sessionId, input.turnId, input.path, input.hunkId)),
    ),
  /** Files back to before a turn (or to a checkpoint); dryRun: what would change, nothing changed. */
  restore: sessionProcedure("session.write")
    .input(
      session.extend({
        turnId: id.optional(),
        checkpointId: id.optional(),
        dryRun: z.boolean(),
        keepUserEdits: z.boolean().optional(),
      }),
    )
    .mutation(({ ctx, input }) => guard(() => ctx.services.checkpoints.restore(input))),
});
