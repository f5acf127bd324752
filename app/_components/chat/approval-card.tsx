"use client";
// An approval card, inline where the call is: exactly what will run (command, diff or URL), why
// it needs approval, and the three answers. Keyboard on the focused card: Enter approves once,
// Esc rejects (with the message typed, if any). The server records only the first answer, so
// two tabs answering run the call once; the loser is told. A read-only viewer sees the card
// without the answers. Once answered, the diff moves to the tool card (which shows what was
// applied), so it is not shown twice.
import { useEffect, useRef, useState } from "react";
import type { ApprovalCard as Card } from "../../_lib/session-state";
import type { ApprovalChoice } from "../../_lib/session-api";
import { DiffText } from "./diff-text";
import { useReadOnly } from "../../_lib/read-only";
import styles from "./chat.module.css";

const DECIDED: Record<string, string> = {
  approved_once: "Approved once",
  approved_session: "Approved for this session",
  rejected: "Rejected",
  cancelled: "Cancelled (the turn ended)",
};

export function ApprovalCard({ card, onAnswer, autoFocus }: { card: Card; onAnswer(choice: ApprovalChoice, message?: string): Promise<unknown>; autoFocus?: boolean }) {
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const ref = useRef<HTMLDivElement>(null);
  const readOnly = useReadOnly();
  const pending = !card.decision;

  useEffect(() => {
    if (pending && autoFocus && !readOnly) ref.current?.focus();
  }, [pending, autoFocus, readOnly]);

  const answer = (choice: ApprovalChoice) => {
    if (busy || !pending || readOnly) return;
    setBusy(true);
    setError(undefined);
    onAnswer(choice, choice === "reject" ? message.trim() || undefined : undefined).then(
      () => setBusy(false),
      (err: Error) => {
        setBusy(false);
        setError(err.message);
      },
    );
  };

  const r = card.request;
  return (
    <div
      ref={ref}
      tabIndex={-1}
      className={styles.approval}
      data-testid="approval-card"
      data-state={card.decision ?? "pending"}
      onKeyDown={(e) => {
        if (!pending) return;
        if (e.key === "Enter" && !e.shiftKey && (e.target as HTMLElement).tagName !== "BUTTON") {
          e.preventDefault();
          e.stopPropagation();
          answer("once");
        } else if (e.key === "Escape") {
          e.preventDefault();
          e.stopPropagation();
          answer("reject");
        }
      }}
    >
      <div>
        <strong>{pending ? "Approve?" : DECIDED[card.decision!]}</strong> <span className="muted">{r.reason}</span>
      </div>
      {r.command && <pre className={styles.approvalWhat} data-testid="approval-command">{r.command}</pre>}
      {r.url && <pre className={styles.approvalWhat}>{r.url}</pre>}
      {r.diff && pending && <DiffText text={r.diff} />}
      {!r.command && !r.url && !r.diff && <pre className={styles.approvalWhat}>{r.summary}</pre>}
      {pending && readOnly ? (
        <div className={styles.decided} data-testid="approval-waiting">Waiting for the owner to answer.</div>
      ) : pending ? (
        <div className={styles.approvalButtons}>
          <button className={styles.approve} disabled={busy} onClick={() => answer("once")} data-testid="approve-once">
            Approve once
          </button>
          <button disabled={busy} onClick={() => answer("session")} title={r.covers ? `Covers: ${r.covers}` : undefined} data-testid="approve-session">
            Approve for this session{r.covers ? ` (${r.covers})` : ""}
          </button>
          <input
            placeholder="Message to the model (optional)"
            value={message}
            onChange={(e) => setMessage(e.target.value)}
            data-testid="reject-message"
            aria-label="Message to the model with a rejection"
          />
          <button disabled={busy} onClick={() => answer("reject")} data-testid="reject">
            Reject
          </button>
        </div>
      ) : (
        card.message && <div className={styles.decided}>Message: {card.message}</div>
      )}
      {error && <div className={styles.error}>{error}</div>}
      {pending && !readOnly && <div className={styles.decided}>Enter approves once · Esc rejects</div>}
    </div>
  );
}
