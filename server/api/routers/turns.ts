// Turns: send a message (starts a turn), cancel the running turn, and the per-session event
// subscription. The subscription is tracked by sequence number, so tRPC's WebSocket client
// resumes after a reconnect with exactly the events it missed; a client may also pass the
// `lastSeq` it has (0 or none: the whole session, which rebuilds it from the database).
// A share-link viewer may follow its session, its streams redacted joined rather than event by
// event; when its link ends the subscription ends with FORBIDDEN and the reason.
import { tracked, TRPCError } from "@trpc/server";
import { z } from "zod";
import { EngineError } from "../../engine/engine";
import { router, serviceErrors, sessionProcedure, sessionReadProcedure } from "../trpc";
import { LINK_MESSAGES } from "../../auth/pages";
import { mapIterable } from "../map-iterable";
import { SendImages } from "../../protocol/attachments";
import type { SessionEvent } from "../../protocol/events";
import { redactedEvents } from "../../auth/redact-stream";
import { redactedEarlier } from "../../hub/earlier-redacted";
import { CheckpointError } from "../../services/checkpoints";

const session = z.object({ sessionId: z.string().min(1) });
const LOST_EVENTS =
  "Events this page showed were lost when the server stopped; it reloads the session from what was kept.";
/** Another instance may be committing the event right now: asked twice, 300 ms apart. */
const holdsSoon = async (
  hub: { holds(sessionId: string, seq: number): Promise<boolean> },
  sessionId: string,
  seq: number,
) =>
  (await hub.holds(sessionId, seq)) || (await new Promise((r) => setTimeout(r, 300)), await hub.holds(sessionId, seq));
const rewindGuard = serviceErrors(CheckpointError, (e) => ({ code: e.code }));
const windowTurns = z.number().int().min(1).max(1_000);
const ENGINE_CODES = {
  busy: "CONFLICT",
  not_found: "NOT_FOUND",
  empty: "BAD_REQUEST",
  invalid: "BAD_REQUEST",
  disposed: "SERVICE_UNAVAILABLE",
  unavailable: "SERVICE_UNAVAILABLE",
} as const;

// Acting in a session: its creator (authorization reads the raw session id first); later
// .input() calls extend the object.
const turnProcedure = sessionProcedure("session.write")
  .input(session)
  .use(({ ctx, next }) => {
    const { engine, hub } = ctx.services;
    return next({ ctx: { ...ctx, engine, hub } });
  });

export const turnsRouter = router({
  // The session's creator only (the engine checks its org again as it reads it).
  send: sessionProcedure("session.write")
    .input(session)
    // Text, images (protocol/attachments.ts), or both: the engine refuses a message with neither.
    .input(z.object({ text: z.string().max(200_000), images: SendImages.optional() }))
    .mutation(async ({ ctx, input }) => {
      try {
        const sent = await ctx.services.engine.sendMessage(
          input.sessionId,
          { userId: ctx.actor.userId, orgId: ctx.actor.orgId },
          input.text,
          input.images,
        );
        if (sent.first) await ctx.services.sessions.nameFromFirstMessage(input.sessionId, input.text.trim() || "Image");
        return sent;
      } catch (err) {
        if (err instanceof EngineError) throw new TRPCError({ code: ENGINE_CODES[err.code], message: err.message });
        throw err;
      }
    }),

  /** Rewinds to before turn T (issue 27): the conversation (T and later leave the model's context,
   *  kept in the events as rewound), the files (restored as checkpoints.restore), or both; dryRun
   *  shows what would change. PRECONDITION_FAILED while a turn runs. */
  rewind: turnProcedure
    .input(
      z.object({
        turnId: z.string().min(1).max(200),
        conversation: z.boolean(),
        files: z.boolean(),
        dryRun: z.boolean(),
        keepUserEdits: z.boolean().optional(),
      }),
    )
    .mutation(({ ctx, input }) => rewindGuard(() => ctx.services.rewinds.rewind(input))),
  /** Undoes a conversation rewind (a files restore is undone by checkpoints.restore to its undoCheckpointId). */
  unrewind: turnProcedure
    .input(z.object({ rewindId: z.string().min(1).max(200) }))
    .mutation(({ ctx, input }) => rewindGuard(() => ctx.services.rewinds.unrewind(input.sessionId, input.rewindId))),

  cancel: turnProcedure.mutation(async ({ ctx, input }) => {
    const cancelled = await ctx.engine.cancel(input.sessionId);
    // Cards left by a turn that is no longer running (a restart) are cancelled too.
    await ctx.services.approvals.cancelSession(input.sessionId);
    return { cancelled };
  }),

  /** Where the IDE starts rebuilding a long session: after the seq this returns, its latest
   *  `turns` turns, with the session-wide events from before them (hub/history.ts). */
  window: sessionReadProcedure()
    .input(session)
    .input(z.object({ turns: windowTurns }))
    .query(({ ctx, input }) => ctx.services.history.window(input.sessionId, input.turns)),

  /** Up to `turns` turns before `beforeSeq`, folded, for "show earlier": as many as a byte
   *  budget holds, or a part of one turn over it (`partial`: ask again before its afterSeq). */
  earlier: sessionReadProcedure()
    .input(session)
    .input(z.object({ beforeSeq: z.number().int().min(1), turns: windowTurns }))
    .query(({ ctx, input }) => {
      const { history } = ctx.services;
      if (ctx.viewer) return redactedEarlier(history, input.sessionId, input.beforeSeq, input.turns);
      return history.earlier(input.sessionId, input.beforeSeq, input.turns);
    }),

  events: sessionReadProcedure()
    .input(session)
    .input(
      z.object({
        lastSeq: z.number().int().nonnegative().optional(),
        /** Set by tRPC's client on reconnect: the id (seq) of the last event it received. */
        lastEventId: z.string().regex(/^\d+$/).nullish(),
        /** Stored runs of text, reasoning and output deltas as one event each (the IDE rebuilding
         *  a long session); live events still come one by one. */
        folded: z.boolean().optional(),
      }),
    )
    .subscription(async ({ ctx, input, signal }) => {
      const after = input.lastEventId ? Number(input.lastEventId) : (input.lastSeq ?? 0);
      const linkEnded = ctx.viewer?.signal;
      const ended = () =>
        new TRPCError({
          code: "FORBIDDEN",
          message:
            LINK_MESSAGES[(linkEnded?.reason as keyof typeof LINK_MESSAGES) ?? "revoked"] ?? LINK_MESSAGES.revoked,
        });
      if (linkEnded?.aborted) throw ended();
      // Shown live but lost in a crash before its write: the client starts over from what is
      // stored (app/_lib/use-session-events.ts), so it never shows what the history lacks. (A
      // viewer resumes from its turn's start, below, through the redaction's own pieces.)
      if (after > 0 && !ctx.viewer && !(await holdsSoon(ctx.services.hub, input.sessionId, after)))
        throw new TRPCError({ code: "PRECONDITION_FAILED", message: LOST_EVENTS });
      const until = linkEnded && signal ? AbortSignal.any([signal, linkEnded]) : signal;
      const { hub, db } = ctx.services;
      // One socket follows a bounded number of streams (http/socket-limits.ts).
      const conn = ctx.connection;
      if (conn && conn.subscriptions >= conn.limit) {
        throw new TRPCError({
          code: "TOO_MANY_REQUESTS",
          message: `This connection already follows ${conn.limit} event subscriptions, the most one connection may; end one first.`,
        });
      }
      if (conn) conn.subscriptions++;
      let events: AsyncIterable<SessionEvent>;
      try {
        const options = { folded: input.folded, ready: conn?.ready };
        if (!ctx.viewer) events = hub.subscribe(input.sessionId, after, until, options);
        else {
          // A viewer's streams are redacted joined (auth/redact-stream.ts): a resume reads from its
          // turn's start, where no stream was open, and hands out only what follows `after`.
          const start =
            after > 0
              ? await db.sessionEvent.findFirst({
                  where: { sessionId: input.sessionId, type: "turn.started", seq: { lte: after } },
                  orderBy: { seq: "desc" },
                  select: { seq: true },
                })
              : null;
          events = redactedEvents(hub.subscribe(input.sessionId, start ? start.seq - 1 : 0, until, options), after);
        }
      } catch (err) {
        if (conn) conn.subscriptions--;
        throw err;
      }
      return mapIterable(
        events,
        (ev) => tracked(String(ev.seq), ev),
        () => {
          if (linkEnded?.aborted) throw ended();
        },
        conn && (() => conn.subscriptions--),
      );
    }),
});
