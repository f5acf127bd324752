"use client";
// The session's total in the top bar: its dollars (or "price unknown" for a model the price
// table does not know) and, on hover, its tokens with cache reads and writes apart.
import { useState } from "react";
import type { SessionState } from "../../_lib/session-state";
import { costText, tokensText, useSessionCost } from "../../_lib/session-cost";
import styles from "./sessions.module.css";

const short = (v: number) =>
  v >= 1_000_000 ? `${(v / 1_000_000).toFixed(1)}M` : v >= 1_000 ? `${(v / 1_000).toFixed(1)}K` : String(v);

export function CostTotal({ sessionId, state }: { sessionId: string; state: SessionState }) {
  const cost = useSessionCost(sessionId, state);
  const [open, setOpen] = useState(false);
  const total = cost.data?.total;
  if (!total) return null;
  const used =
    total.usage.inputTokens + total.usage.outputTokens + total.usage.cacheReadTokens + total.usage.cacheWriteTokens;
  if (used === 0) return null;
  return (
    <span className={styles.costWrap}>
      <button
        type="button"
        className={styles.cost}
        onClick={() => setOpen(!open)}
        aria-expanded={open}
        title={`This session so far: ${tokensText(total.usage)} tokens`}
        data-testid="session-cost"
      >
        {short(used)} tokens · {costText(total)}
      </button>
      {open && (
        <span className={styles.costPanel} role="status" data-testid="session-cost-detail">
          This session so far: {tokensText(total.usage)} tokens; {costText(total)}. Dollars come from the price table
          (built in, or QUIVER_PRICES).
        </span>
      )}
    </span>
  );
}

/** A turn's dollars beside its tokens in the chat. */
export function TurnCost({ sessionId, state, turnId }: { sessionId: string; state: SessionState; turnId: string }) {
  const cost = useSessionCost(sessionId, state);
  const turn = cost.data?.turns[turnId];
  if (!turn) return null;
  return <span data-testid="turn-cost"> · {costText(turn)}</span>;
}
