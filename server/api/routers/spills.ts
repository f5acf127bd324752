// Spilled tool output for the IDE's full-output viewer: one page (byte range, snapped to whole
// characters) at a time, so a many-megabyte spill is never sent or rendered whole. A share-link
// viewer of the session may read them too, each page redacted with the text around it.
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import type { SpillStore } from "../../services/spills";
import { router, sessionReadProcedure } from "../trpc";
import { HOLD_CAP, redactRange } from "../../auth/redact-stream";
import { verbatim } from "../../auth/redact";

export const SPILL_PAGE_MAX = 1024 * 1024;

export const spillsRouter = router({
  read: sessionReadProcedure()
    .input(
      z.object({
        sessionId: z.string().min(1),
        ref: z.string().regex(/^sp_[0-9a-f]{32}$/, "not a spill reference"),
        offset: z.number().int().nonnegative(),
        length: z.number().int().min(1).max(SPILL_PAGE_MAX),
      }),
    )
    .query(async ({ ctx, input }) => {
      const spills: Pick<SpillStore, "read"> = ctx.services.spills;
      const slice = await spills.read(input.ref, {
        sessionId: input.sessionId,
        offset: input.offset,
        length: input.length,
      });
      if (!slice)
        throw new TRPCError({
          code: "NOT_FOUND",
          message: "This output is no longer stored (spills expire after 7 days).",
        });
      if (!ctx.viewer) return slice;
      // A viewer's page is redacted with what surrounds it, so a key across a page's edge is caught.
      const from = Math.max(0, slice.offset - HOLD_CAP);
      const around = await spills.read(input.ref, {
        sessionId: input.sessionId,
        offset: from,
        length: slice.end - from + HOLD_CAP,
      });
      if (!around) return slice;
      const start = Buffer.from(around.text)
        .subarray(0, slice.offset - around.offset)
        .toString().length;
      return verbatim({ ...slice, text: redactRange(around.text, start, start + slice.text.length) });
    }),
});
