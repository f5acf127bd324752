"use client";
// The chat's calls to the server (send, stop, answer approvals, event subscription, spilled
// output), in one place so the components do not depend on router names.
import { useMemo } from "react";
import { useTRPCClient } from "./trpc";
import type { SessionEvent } from "../../server/protocol/events";
import type { SendImage } from "../../server/protocol/attachments";
import type { QuestionAnswer } from "../../server/protocol/todos-questions";
import type { TurnWindow } from "./session-state";

export type ApprovalChoice = "once" | "session" | "reject";

export interface SpillPage {
  text: string;
  offset: number;
  end: number;
  totalBytes: number;
}

export interface SessionApi {
  /** `images`: new ones as base64, or ones already in the session by id (Retry). */
  send(sessionId: string, text: string, images?: SendImage[]): Promise<unknown>;
  cancel(sessionId: string): Promise<unknown>;
  answer(sessionId: string, approvalId: string, choice: ApprovalChoice, message?: string): Promise<unknown>;
  /** Answers ask_user's question card (by the ask_user call's id). */
  answerQuestion(sessionId: string, callId: string, answer: QuestionAnswer): Promise<unknown>;
  spill(sessionId: string, ref: string, offset: number, length: number): Promise<SpillPage>;
  /** Where the session's latest `turns` turns start (a long session opens there). */
  window(sessionId: string, turns: number): Promise<TurnWindow>;
  /** The `turns` turns before `beforeSeq`, with their events. */
  earlier(sessionId: string, beforeSeq: number, turns: number): Promise<TurnWindow & { events: SessionEvent[] }>;
  /** Events after `lastSeq`; the socket resubscribes by itself, replays are dropped by seq. */
  subscribe(
    sessionId: string,
    lastSeq: number,
    handlers: { onEvent(ev: SessionEvent): void; onError(err: Error): void; onStarted?(): void },
  ): () => void;
}

/** Tracked subscription events arrive as `{ id, data }`; plain ones as the event itself. */
function unwrap(d: unknown): SessionEvent {
  const v = d as { id?: string; data?: SessionEvent } & SessionEvent;
  return v && typeof v === "object" && "data" in v && v.data && typeof v.data === "object" && "seq" in v.data
    ? v.data
    : v;
}

export function useSessionApi(): SessionApi {
  const client = useTRPCClient();
  return useMemo(() => build(client), [client]);
}

function build(client: ReturnType<typeof useTRPCClient>): SessionApi {
  return {
    send: (sessionId, text, images) =>
      client.turns.send.mutate({ sessionId, text, ...(images?.length ? { images } : {}) }),
    cancel: (sessionId) => client.turns.cancel.mutate({ sessionId }),
    answerQuestion: (sessionId, callId, answer) => client.questions.answer.mutate({ sessionId, callId, answer }),
    answer: (_sessionId, approvalId, choice, message) =>
      client.approvals.answer.mutate({ approvalId, choice, ...(message ? { message } : {}) }),
    spill: (sessionId, ref, offset, length) => client.spills.read.query({ sessionId, ref, offset, length }),
    // As events (unwrap): the wire's JSON types make `unknown` fields optional.
    window: (sessionId, turns) =>
      client.turns.window.query({ sessionId, turns }).then((w) => w as unknown as TurnWindow),
    earlier: (sessionId, beforeSeq, turns) =>
      client.turns.earlier
        .query({ sessionId, beforeSeq, turns })
        .then((w) => w as unknown as TurnWindow & { events: SessionEvent[] }),
    subscribe(sessionId, lastSeq, h) {
      // Folded: a long session's stored deltas come as one event per run, not one per token.
      const sub = client.turns.events.subscribe(
        { sessionId, lastSeq, folded: true },
        { onData: (d) => h.onEvent(unwrap(d)), onError: h.onError, onStarted: h.onStarted },
      );
      return () => sub.unsubscribe();
    },
  };
}
