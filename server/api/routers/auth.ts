// Who the browser is, so the IDE can show a shared session read-only (or say why it cannot).
import { publicProcedure, router } from "../trpc";

export type Whoami =
  /** `userId`: whose remembered layout the IDE uses (app/_components/layout/use-ide-layout.ts). */
  | { kind: "member"; userId: string }
  | { kind: "viewer"; sessionId: string }
  | { kind: "refused"; code: "UNAUTHORIZED" | "FORBIDDEN"; message: string };

export const authRouter = router({
  whoami: publicProcedure.query(({ ctx }): Whoami => {
    if (ctx.actor) return { kind: "member", userId: ctx.actor.userId };
    if (ctx.viewer) return { kind: "viewer", sessionId: ctx.viewer.sessionId };
    return { kind: "refused", ...(ctx.refusal ?? { code: "UNAUTHORIZED", message: "Sign in to do this." }) };
  }),
});
