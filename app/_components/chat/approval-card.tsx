"use client";
// An approval card, inline where the call is: exactly what will run (command, diff or URL), why
// it needs approval, and the three answers. A card never takes the keyboard: it is announced
// (chat-pane's live region and a pulse) and Ctrl+Alt+A goes to it, so Enter typed in the
// terminal or the editor stays there. Keyboard on the focused card: Enter approves once, Esc
// rejects (with the message typed, if any). For ARM_MS after it appears the card takes no
// answer at all (its buttons show disabled): a click or key aimed at what was there before it
// cannot answer it; a held key's repeats never do. The server records only the first answer, so
// two tabs answering run the call once; the loser is told. A read-only viewer sees the card
// without the answers. Once answered, the diff moves to the tool card (which shows what was
// applied), so it is not shown twice. A change longer than the card shows is clipped with a
// count of what is left out, and "Show the whole change" pages through all of it. A destructive
// command (the server's shell classifier) says so in a mark and words, not colour alone; "for
// this session" is spelt out in plain sentences. A bidi control or invisible character in the
// command, URL or diff shows as a mark (visible-text.tsx): it cannot reorder what the card shows.
import { useEffect, useState } from "react";
import type { ApprovalCard as Card } from "../../_lib/session-state";
import type { ApprovalChoice } from "../../_lib/session-api";
import { markedText, VisibleText } from "../../_lib/visible-text";
import { DiffText } from "./diff-text";
import { useReadOnly } from "../../_lib/read-only";
import { useSandboxStatus } from "../../_lib/sandbox-status";
import styles from "./chat.module.css";
import own from "./tool-card.module.css";

const DECIDED: Record<string, string> = {
  approved_once: "Approved once",
  approved_session: "Approved for this session",
  rejected: "Rejected",
  cancelled: "Cancelled (the turn ended)",
};

/** How long a new card ignores answers: longer than a typist's keystroke interval, short
 *  enough that a person who means to answer does not notice. */
export const ARM_MS = 500;

/** The session button says what it allows: the one sentence, or a pointer to the list under it. */
function sessionLabel(r: Card["request"]): string {
  if (r.allows?.length === 1) return r.allows[0];
  if (r.allows && r.allows.length > 1) return "Approve for this session (see below)";
  return `Approve for this session${r.covers ? ` (${r.covers})` : ""}`;
}

export function ApprovalCard({
  card,
  onAnswer,
  onViewWhole,
}: {
  card: Card;
  onAnswer(choice: ApprovalChoice, message?: string): Promise<unknown>;
  /** Opens the whole of a change the card shows clipped (`request.diffRef`, a spill). */
  onViewWhole?(ref: string): void;
}) {
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [armedAt, setArmedAt] = useState<number>();
  const readOnly = useReadOnly();
  const sandbox = useSandboxStatus();
  const pending = !card.decision;

  useEffect(() => {
    if (!pending) return;
    const timer = setTimeout(() => setArmedAt(performance.now()), ARM_MS);
    return () => clearTimeout(timer);
  }, [pending]);
  const armed = armedAt !== undefined;

  const answer = (choice: ApprovalChoice) => {
    if (busy || !pending || readOnly || !armed) return;
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
      tabIndex={-1}
      className={`${styles.approval} ${pending ? styles.approvalPending : ""}`}
      data-testid="approval-card"
      data-state={card.decision ?? "pending"}
      data-armed={pending && armed ? "true" : undefined}
      role="group"
      aria-label={pending ? `Approval needed: ${markedText(r.summary)}` : undefined}
      onKeyDown={(e) => {
        if (!pending) return;
        // A key pressed before the card could answer (a repeat of a held key, or one queued
        // before it was armed) is not an answer; it is still the card's (Esc must not fall
        // through to stopping the turn).
        const early = !armed || e.repeat || e.timeStamp < (armedAt ?? Infinity);
        if (e.key === "Enter" && !e.shiftKey && (e.target as HTMLElement).tagName !== "BUTTON") {
          e.preventDefault();
          e.stopPropagation();
          if (!early) answer("once");
        } else if (e.key === "Escape") {
          e.preventDefault();
          e.stopPropagation();
          if (!early) answer("reject");
        }
      }}
    >
      <div>
        <strong>{pending ? "Approve?" : DECIDED[card.decision!]}</strong> <span className="muted">{r.reason}</span>
      </div>
      {r.policyUnchecked && (
        <div className={styles.error} data-testid="approval-policy-unchecked">
          {r.policyUnchecked}
        </div>
      )}
      {r.note && (
        <div className={own.destructive} role="note" data-testid="approval-note">
          <span aria-hidden="true">⚠</span> <span>{r.note}</span>
        </div>
      )}
      {r.destructive && (
        <div className={own.destructive} role="note" data-testid="approval-destructive">
          <span aria-hidden="true">⚠</span> <strong>Destructive command:</strong>{" "}
          <span>it {r.destructive.reason}.</span>
        </div>
      )}
      {r.command && (
        <pre className={styles.approvalWhat} data-testid="approval-command">
          <VisibleText text={r.command} />
        </pre>
      )}
      {r.command && sandbox && !sandbox.sandboxed && (
        <div className={styles.error} data-testid="approval-unsandboxed">
          Runs unsandboxed, with your full rights{sandbox.reason ? ` (${sandbox.reason})` : ""}.
        </div>
      )}
      {r.url && (
        <pre className={styles.approvalWhat}>
          <VisibleText text={r.url} />
        </pre>
      )}
      {r.diff && pending && <DiffText text={r.diff} />}
      {r.diff && r.diffRef && onViewWhole && (
        <button onClick={() => onViewWhole(r.diffRef!)} data-testid="approval-whole-change">
          Show the whole change
        </button>
      )}
      {!r.command && !r.url && !r.diff && (
        <pre className={styles.approvalWhat}>
          <VisibleText text={r.summary} />
        </pre>
      )}
      {pending && readOnly ? (
        <div className={styles.decided} data-testid="approval-waiting">
          Waiting for the owner to answer.
        </div>
      ) : pending ? (
        <div className={styles.approvalButtons}>
          <button
            className={styles.approve}
            disabled={busy || !armed}
            onClick={() => answer("once")}
            data-testid="approve-once"
          >
            Approve once
          </button>
          <button
            disabled={busy || !armed}
            onClick={() => answer("session")}
            title={r.covers ? `Covers: ${r.covers}` : undefined}
            data-testid="approve-session"
          >
            {sessionLabel(r)}
          </button>
          <input
            placeholder="Message to the model (optional)"
            value={message}
            onChange={(e) => setMessage(e.target.value)}
            data-testid="reject-message"
            aria-label="Message to the model with a rejection"
          />
          <button disabled={busy || !armed} onClick={() => answer("reject")} data-testid="reject">
            Reject
          </button>
        </div>
      ) : (
        card.message && <div className={styles.decided}>Message: {card.message}</div>
      )}
      {pending && !readOnly && r.allows && r.allows.length > 1 && (
        <ul className={own.allows} aria-label="Approving for this session allows" data-testid="approval-allows">
          {r.allows.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
      {error && <div className={styles.error}>{error}</div>}
      {pending && !readOnly && (
        <div className={styles.decided}>Ctrl+Alt+A goes here · then Enter approves once · Esc rejects</div>
      )}
    </div>
  );
}
