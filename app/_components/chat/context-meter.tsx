"use client";
// How full the model's context window was at the session's latest request, beside the model
// under the composer: the figure a person watches to know when a long session will be
// summarized (the server does it at COMPACT_AT of the window) or should start afresh.
import { COMPACT_AT } from "../../../server/protocol/events";
import styles from "./chat.module.css";

const short = (n: number) =>
  n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)}M` : n >= 1_000 ? `${Math.round(n / 1_000)}K` : String(n);

/** `onCompact`: a click summarizes the conversation now ("/compact"); none while a turn runs. */
export function ContextMeter({
  context,
  onCompact,
}: {
  context: { tokens: number; window: number } | null;
  onCompact?: () => void;
}) {
  if (!context) return null;
  const share = Math.min(1, context.tokens / context.window);
  const level = share >= COMPACT_AT ? styles.meterFull : share >= COMPACT_AT * 0.75 ? styles.meterHigh : "";
  return (
    <button
      type="button"
      className={`${styles.meter} ${level}`}
      disabled={!onCompact}
      onClick={onCompact}
      title={
        `The latest request filled ${context.tokens.toLocaleString("en")} of the model's ${context.window.toLocaleString("en")}-token context window. ` +
        `At ${Math.round(COMPACT_AT * 100)}% the conversation is summarized so the session can go on.${onCompact ? " Click to summarize it now (/compact)." : ""}`
      }
      data-testid="context-meter"
    >
      <span className={styles.meterBar}>
        <span style={{ width: `${(share * 100).toFixed(1)}%` }} />
      </span>
      {Math.round(share * 100)}% of {short(context.window)}
    </button>
  );
}
