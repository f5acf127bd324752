// The one initTRPC of the server: context (services + who is asking) and the procedure kinds.
import { initTRPC, TRPCError } from "@trpc/server";
import type { Actor, Services } from "../services/types";

export interface Context {
  services: Services;
  /** null for anonymous requests (e.g. a share-link viewer before it is resolved). */
  actor: Actor | null;
}

const t = initTRPC.context<Context>().create();

export const router = t.router;
export const publicProcedure = t.procedure;

/** Requires a signed-in member; viewers of shared sessions never reach these. */
export const memberProcedure = t.procedure.use(({ ctx, next }) => {
  if (!ctx.actor) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in to do this." });
  return next({ ctx: { ...ctx, actor: ctx.actor } });
});

export const adminProcedure = memberProcedure.use(({ ctx, next }) => {
  if (ctx.actor.role === "member") throw new TRPCError({ code: "FORBIDDEN", message: "Only org admins can do this." });
  return next();
});
