"use client";
// A session's tokens and dollars as the server prices them (sessions.cost: per turn and in all,
// from the recorded model requests and the price table), read again whenever the event stream
// reports new usage or a turn's end, and the words the chat and the top bar show them in.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useTRPC } from "./trpc";
import type { SessionState } from "./session-state";
import type { CostFigure } from "../../server/protocol/ide-types";
import type { Usage } from "../../server/protocol/events";

export type { CostFigure };

/** Changes whenever a turn's usage or status does: the cost is read again then. */
export function usageStamp(state: SessionState): string {
  return Object.values(state.turns)
    .map(
      (t) =>
        `${t.turnId}:${t.status}:${t.usage ? `${t.usage.inputTokens}/${t.usage.outputTokens}/${t.usage.cacheReadTokens}/${t.usage.cacheWriteTokens}` : ""}`,
    )
    .join(",");
}

export function useSessionCost(sessionId: string, state: SessionState) {
  const trpc = useTRPC();
  const options = trpc.sessions.cost.queryOptions(
    { id: sessionId },
    { retry: false, placeholderData: keepPreviousData },
  );
  // The stamp beside the input in the key (tRPC reads only the input from it): every reader of
  // the same moment shares one request, and new usage makes a new one.
  const [path, args] = options.queryKey;
  return useQuery({
    ...options,
    queryKey: [path, { ...args, stamp: usageStamp(state) }] as unknown as typeof options.queryKey,
  });
}

const n = (v: number) => v.toLocaleString("en");

/** "$0.0123", "$1.24": cents and below keep four places, so a cheap turn is not "$0.00". */
export function dollars(v: number): string {
  return v >= 1 ? `$${v.toFixed(2)}` : `$${v.toFixed(4)}`;
}

/** "1,200 in · 300 out · 5,000 cache read · 800 cache write". */
export function tokensText(u: Usage): string {
  return `${n(u.inputTokens)} in · ${n(u.outputTokens)} out · ${n(u.cacheReadTokens)} cache read · ${n(u.cacheWriteTokens)} cache write`;
}

/** The dollars, or why there are none: "price unknown", or dollars for part of the tokens. */
export function costText(c: Pick<CostFigure, "costUsd" | "unpriced">): string {
  if (c.costUsd === undefined) return "price unknown";
  return c.unpriced.length ? `${dollars(c.costUsd)} + price unknown for ${c.unpriced.join(", ")}` : dollars(c.costUsd);
}
