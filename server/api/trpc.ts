// The one initTRPC of the server: context (services + who is asking) and the procedure kinds.
// Every procedure is one of: public (health, who am I), member (the owner and org members;
// a share-link viewer is refused with FORBIDDEN), or session-read (members with access, and a
// viewer of exactly that session).
import { fileURLToPath } from "node:url";
import { initTRPC, TRPCError, type TRPC_ERROR_CODE_KEY } from "@trpc/server";
import type { Actor, Services } from "../services/types";
import { redactAnswer } from "../auth/redact";
import type { ConnectionCount } from "../http/socket-limits";

/** A share-link viewer: may read one session, nothing else. */
export interface Viewer {
  sessionId: string;
  linkId: string;
  /** Aborts when the link is revoked or expires (WebSocket connections; absent over HTTP). */
  signal?: AbortSignal;
}

export interface Context {
  services: Services;
  /** null for anyone who is not a signed-in member (viewers, anonymous requests). */
  actor: Actor | null;
  viewer?: Viewer;
  /** Why there is no actor: the error an anonymous request or an ended link gets. */
  refusal?: { code: "UNAUTHORIZED" | "FORBIDDEN"; message: string };
  /** A WebSocket's own count of open subscriptions and its bound (http/socket-limits.ts). */
  connection?: ConnectionCount;
}

/** The server's own folder, taken out of error messages a client reads (an internal error's
 *  message may name a file under it). */
const INSTALL_ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

const t = initTRPC.context<Context>().create({
  // A stack names the install's files and the code path: only a server started for
  // development (`--dev`, NODE_ENV=development) sends it; the message alone goes to anyone else.
  errorFormatter({ shape, ctx }) {
    if (ctx?.services.env?.NODE_ENV === "development") return shape;
    const { stack: _stack, ...data } = shape.data;
    return { ...shape, message: shape.message.split(INSTALL_ROOT).join("<quiver>"), data };
  },
});

export const router = t.router;
export const publicProcedure = t.procedure;

export const VIEWER_REFUSED = "A read-only share link cannot do this.";

function refuse(ctx: Context): never {
  if (ctx.viewer) throw new TRPCError({ code: "FORBIDDEN", message: VIEWER_REFUSED });
  throw new TRPCError(ctx.refusal ?? { code: "UNAUTHORIZED", message: "Sign in to do this." });
}

/** Requires a signed-in member; viewers of shared sessions never reach these. */
export const memberProcedure = t.procedure.use(({ ctx, next }) => {
  if (!ctx.actor) refuse(ctx);
  return next({ ctx: { ...ctx, actor: ctx.actor } });
});

export const adminProcedure = memberProcedure.use(({ ctx, next }) => {
  if (ctx.actor.role === "member") throw new TRPCError({ code: "FORBIDDEN", message: "Only org admins can do this." });
  return next();
});

/**
 * Reads one session: a member with access to it, or a viewer whose link is for it (who gets
 * the answer with secrets redacted). The session id is read from the raw input's `key` field
 * before the procedure's own parsing.
 */
export function sessionReadProcedure(key: "sessionId" | "id" = "sessionId") {
  return t.procedure.use(async ({ ctx, getRawInput, next }) => {
    const raw = (await getRawInput()) as Record<string, unknown> | undefined;
    const sessionId = raw && typeof raw === "object" ? raw[key] : undefined;
    if (typeof sessionId !== "string" || sessionId === "") throw new TRPCError({ code: "BAD_REQUEST", message: `${key} is required` });
    if (ctx.actor) {
      await ctx.services.sessions.assertAccess(ctx.actor, sessionId);
    } else if (ctx.viewer) {
      if (ctx.viewer.sessionId !== sessionId) throw new TRPCError({ code: "FORBIDDEN", message: "This share link is for another session." });
    } else {
      refuse(ctx);
    }
    const result = await next({ ctx: { ...ctx, sessionId } });
    // A viewer reads everything with secrets taken out (events one by one, as they stream).
    return ctx.viewer && result.ok ? { ...result, data: redactAnswer(result.data) } : result;
  });
}

/**
 * For a router's calls into one service: runs the call and turns that service's own error
 * class into the TRPCError it stands for (`code`, and a `cause` the client may read); any other
 * error passes through as an internal one.
 */
export function serviceErrors<E extends Error>(kind: abstract new (...args: never[]) => E, toTrpc: (err: E) => { code: TRPC_ERROR_CODE_KEY; cause?: unknown }) {
  return async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if (!(err instanceof kind)) throw err;
      const { code, cause } = toTrpc(err);
      throw new TRPCError({ code, message: err.message, cause: cause as Error | undefined });
    }
  };
}
