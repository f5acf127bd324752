// Who the browser is, so the IDE can show a shared session read-only (or say why it cannot).
import { publicProcedure, router } from "../trpc";

export type Whoami =
  | { kind: "member" }
  | { kind: "viewer"; sessionId: string }
  | { kind: "refused"; code: "UNAUTHORIZED" | "FORBIDDEN"; message: string };

export const authRouter = router({
  whoami: publicProcedure.query(({ ctx }): Whoami => {
    if (ctx.actor) return { kind: "member" };
    if (ctx.viewer) return { kind: "viewer", sessionId: ctx.viewer.sessionId };
    return { kind: "refused", ...(ctx.refusal ?? { code: "UNAUTHORIZED", message: "Sign in to do this." }) };
  }),
});
