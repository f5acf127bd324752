// The one initTRPC of the server: context (services + who is asking) and the procedure kinds.
// Every procedure kind starts with one authorization step (server/auth/authorize.ts), which
// names the action and the resource the procedure touches; no kind skips it, and `t` itself is
// not exported, so a router cannot define a procedure that does not ask (the table test,
// server/api/access-table.test.ts, checks every procedure of appRouter starts with the step).
// The kinds: public (health, who am I), account (any signed-in person), member (working in the
// active org), admin (its owners and admins), org(action) (another org-wide action, e.g. policy
// or audit), session(action, key) (one session named by the input: read — its viewers too,
// answered redacted —, inspect, write…) and resource(action, ref) (a resource named by id: an
// approval card, a share link, an org).
import { fileURLToPath } from "node:url";
import { initTRPC, TRPCError, type TRPC_ERROR_CODE_KEY } from "@trpc/server";
import type { Actor, Services } from "../services/types";
import { redactAnswer } from "../auth/redact";
import { authorize, refuseBeforeInput, VIEWER_REFUSED, type Action, type Grant, type Subject } from "../auth/authorize";
import { LINK_MESSAGES } from "../auth/pages";
import { loadResource, type ResourceRef } from "../auth/authorize-resources";
import type { ConnectionCount } from "../http/socket-limits";
import { callLimitsOf, type Caller } from "../http/call-limits";

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
  /** Why there is no actor: the error an anonymous request or an ended link gets (`why`: which
   *  kind of refusal, when the code alone does not say: a revoked device, a removed member). */
  refusal?: { code: "UNAUTHORIZED" | "FORBIDDEN"; message: string; why?: Extract<Subject, { kind: "nobody" }>["why"] };
  /** What authorization granted this call (set by the procedure's first step). */
  grant?: Grant;
  /** A WebSocket's own count of open subscriptions and its bound (http/socket-limits.ts). */
  connection?: ConnectionCount;
  /** The server's operator: the local owner with accounts off (health's whole report). */
  operator?: boolean;
  /** The call came over plain HTTP, where nothing ends a stream when its caller's access ends. */
  overHttp?: boolean;
}

/** The server's own folder, taken out of error messages a client reads (an internal error's
 *  message may name a file under it). */
const INSTALL_ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");

const t = initTRPC.context<Context>().create({
  // Subscriptions are served over the WebSocket only (see step()).
  sse: { enabled: false },
  // A stack names the install's files and the code path: only a server started for
  // development (`--dev`, NODE_ENV=development) sends it; the message alone goes to anyone else.
  errorFormatter({ shape, ctx }) {
    if (ctx?.services.env?.NODE_ENV === "development") return shape;
    const { stack: _stack, ...data } = shape.data;
    return { ...shape, message: shape.message.split(INSTALL_ROOT).join("<quiver>"), data };
  },
});

export const router = t.router;

export { VIEWER_REFUSED };

/** A call on a WebSocket that is being closed because its person's access ended. */
export const CONNECTION_CLOSED =
  "This connection was closed: you were signed out or your access changed. Reload the page to reconnect.";

export const SUBSCRIPTIONS_OVER_WEBSOCKET =
  "Subscriptions are served over the WebSocket at /api/trpc only, not over HTTP: connect with a WebSocket link.";

/** Who the context is, as authorize() sees them. */
export function subjectOf(ctx: Context): Subject {
  // A WebSocket's identity was decided when it opened. Once its link ended, or its person was
  // signed out or lost access (its socket is then closing, auth/accounts/sockets.ts), no call on
  // it is taken, even in the moment before the close completes.
  const linkEnded = ctx.viewer?.signal;
  if (linkEnded?.aborted) {
    const reason = (linkEnded.reason as keyof typeof LINK_MESSAGES) ?? "revoked";
    return { kind: "nobody", why: "ended-link", message: LINK_MESSAGES[reason] ?? LINK_MESSAGES.revoked };
  }
  if (ctx.connection && !ctx.connection.open())
    return { kind: "nobody", why: ctx.viewer ? "ended-link" : "removed-member", message: CONNECTION_CLOSED };
  if (ctx.actor) return { kind: "person", actor: ctx.actor };
  if (ctx.viewer) return { kind: "viewer", sessionId: ctx.viewer.sessionId, linkId: ctx.viewer.linkId };
  const r = ctx.refusal ?? { code: "UNAUTHORIZED" as const, message: "Sign in to do this." };
  return { kind: "nobody", why: r.why ?? (r.code === "UNAUTHORIZED" ? "anonymous" : "ended-link"), message: r.message };
}

/** The authorization steps every procedure starts with (the table test looks for them). */
const STEPS = new WeakSet<object>();
export const startsWithAuthorization = (procedure: { _def: { middlewares: unknown[] } }): boolean => {
  const first = procedure._def.middlewares[0];
  return typeof first === "function" && STEPS.has(first);
};

type RefOf = (raw: Record<string, unknown>) => ResourceRef;

function idFrom(raw: Record<string, unknown>, key: string): string {
  const id = raw[key];
  if (typeof id !== "string" || id === "") throw new TRPCError({ code: "BAD_REQUEST", message: `${key} is required` });
  return id;
}

/** One authorization step: who (the context), the action, and the resource the raw input names.
 *  Nobody is refused before the input is read; the grant is added to the context. */
function step(action: Action, refOf: RefOf) {
  const mw = t.middleware(async ({ ctx, getRawInput, next, type, signal }) => {
    // A stream over HTTP (tRPC's event-stream GET) has no socket that a revoked link, a removal or
    // a sign-out closes (auth/viewers.ts, auth/accounts/sockets.ts): it would go on for whoever
    // opened it. So subscriptions are the WebSocket's only, refused before anything is read.
    if (type === "subscription" && ctx.overHttp)
      throw new TRPCError({ code: "METHOD_NOT_SUPPORTED", message: SUBSCRIPTIONS_OVER_WEBSOCKET });
    const subject = subjectOf(ctx);
    refuseBeforeInput(subject, action);
    const raw = (await getRawInput()) as unknown;
    const input = raw && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
    const grant = authorize(
      subject,
      action,
      await loadResource(ctx.services.db, subject, refOf(input), ctx.services.dbProvider),
    );
    // Queries and mutations wait for a place among the caller's own (http/call-limits.ts).
    const caller: Caller | undefined =
      subject.kind === "viewer"
        ? { kind: "viewer", linkId: subject.linkId }
        : subject.kind === "person"
          ? { kind: "person", id: subject.actor.userId }
          : undefined;
    if (type === "subscription" || !caller) return next({ ctx: { ...ctx, grant } });
    return callLimitsOf(ctx.services).run(caller, () => next({ ctx: { ...ctx, grant } }), signal);
  });
  // .use() keeps the builder's own functions, not the builder: those are what a procedure holds.
  for (const fn of (mw as unknown as { _middlewares: object[] })._middlewares) STEPS.add(fn);
  return mw;
}

/** Steps whose action a viewer may never take: the context's actor is the person. */
function personProcedure(action: Action, refOf: RefOf) {
  return t.procedure.use(step(action, refOf)).use(({ ctx, next }) => {
    // authorize() grants these actions to people only.
    if (!ctx.actor)
      throw new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: `authorize granted ${action} to no person` });
    return next({ ctx: { ...ctx, actor: ctx.actor } });
  });
}

const none: RefOf = () => ({ kind: "none" });
const activeOrg: RefOf = () => ({ kind: "activeOrg" });

/** Anyone (health, who am I). */
export const publicProcedure = t.procedure.use(step("public", none));
/** Any signed-in person, about their own account (in whatever org). */
export const accountProcedure = personProcedure("account.use", none);
/** A signed-in person working in their active org; viewers and strangers are refused. */
export const memberProcedure = personProcedure("org.use", activeOrg);
/** The active org's owners and admins. */
export const adminProcedure = personProcedure("org.admin", activeOrg);
/** Another org-wide action on the active org (policy.read, policy.write, audit.read…). */
export const orgProcedure = (
  action: Extract<Action, "org.use" | "org.admin" | "policy.read" | "policy.write" | "audit.read">,
) => personProcedure(action, activeOrg);

/** An action on a resource named by an input field (a card, a share link, an org). */
export function resourceProcedure(
  action: Exclude<Action, "public" | "session.read">,
  ref: (raw: Record<string, unknown>) => ResourceRef,
) {
  return personProcedure(action, ref);
}
export const byId = {
  approval:
    (key = "approvalId"): RefOf =>
    (raw) => ({ kind: "approval", id: idFrom(raw, key) }),
  shareLink:
    (key = "linkId"): RefOf =>
    (raw) => ({ kind: "shareLink", id: idFrom(raw, key) }),
  org:
    (key = "orgId"): RefOf =>
    (raw) => ({ kind: "org", id: idFrom(raw, key) }),
  session:
    (key = "sessionId"): RefOf =>
    (raw) => ({ kind: "session", id: idFrom(raw, key) }),
};

/** An action in one session, named by the input's `key` field: its creator; for "session.read"
 *  and "session.inspect" the org's admins too (read-only: ctx.grant.readOnly). */
export function sessionProcedure(
  action: Extract<Action, "session.inspect" | "session.write" | "approval.answer" | "share.create" | "share.revoke">,
  key: "sessionId" | "id" = "sessionId",
) {
  return personProcedure(action, byId.session(key));
}

/**
 * Reads one session: its creator, the org's admins (read-only), or a viewer whose link is for it
 * (who gets the answer with secrets redacted). The session id is read from the raw input's `key`
 * field before the procedure's own parsing.
 */
export function sessionReadProcedure(key: "sessionId" | "id" = "sessionId") {
  return t.procedure.use(step("session.read", byId.session(key))).use(async ({ ctx, next }) => {
    const result = await next();
    // A viewer reads everything with secrets taken out (events one by one, as they stream).
    return ctx.grant.viewer && result.ok ? { ...result, data: redactAnswer(result.data) } : result;
  });
}

/**
 * For a router's calls into one service: runs the call and turns that service's own error
 * class into the TRPCError it stands for (`code`, and a `cause` the client may read); any other
 * error passes through as an internal one.
 */
export function serviceErrors<E extends Error>(
  kind: abstract new (...args: never[]) => E,
  toTrpc: (err: E) => { code: TRPC_ERROR_CODE_KEY; cause?: unknown },
) {
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
