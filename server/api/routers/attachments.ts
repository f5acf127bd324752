// Images attached to a session's messages, for the chat to show: one image's bytes at a time,
// read through the driver (Prisma's adapters move Bytes at a few MB/s). A share-link viewer of
// the session may read them too, unredacted: they are bytes, not text.
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { verbatim } from "../../auth/redact";
import { router, sessionReadProcedure } from "../trpc";

export const attachmentsRouter = router({
  read: sessionReadProcedure()
    .input(z.object({ sessionId: z.string().min(1), id: z.string().min(1).max(64) }))
    .query(async ({ ctx, input }) => {
      const [image] = await ctx.services.attachments.images(input.sessionId, [input.id]);
      if (!image) throw new TRPCError({ code: "NOT_FOUND", message: "No such image in this session." });
      return verbatim({
        id: image.id,
        mediaType: image.mediaType,
        bytes: Buffer.byteLength(image.base64, "base64"),
        base64: image.base64,
      });
    }),
});
