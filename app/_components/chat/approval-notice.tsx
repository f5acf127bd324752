"use client";
// How a new approval card makes itself known without taking the keyboard: a live region read
// by screen readers, a pulsing notice above the message box (visible while the card itself is
// scrolled away), and Ctrl+Alt+A (ide-keys.ts), which, like a click on the notice, moves focus
// to the oldest pending card. Focus moves only when the person asks for it.
import type { ApprovalCard } from "../../_lib/session-state";
import styles from "./chat.module.css";

export const APPROVAL_KEY = "Ctrl+Alt+A";

/** Focuses the oldest pending approval card on the page; false when there is none. */
export function focusPendingApproval(): boolean {
  const card = document.querySelector<HTMLElement>('[data-testid="approval-card"][data-state="pending"]');
  if (!card) return false;
  card.scrollIntoView({ block: "nearest" });
  card.focus({ preventScroll: true });
  return true;
}

export function ApprovalNotice({ pending }: { pending: readonly ApprovalCard[] }) {
  const first = pending[0];
  const count = pending.length;
  return (
    <>
      {/* Always in the page, so assistive technology is listening before the text changes. */}
      <div
        className={styles.srOnly}
        role="status"
        aria-live="assertive"
        aria-atomic="true"
        data-testid="approval-announce"
      >
        {first ? `Approval needed: ${first.request.summary}. ${APPROVAL_KEY} goes to it.` : ""}
      </div>
      {first && (
        <button
          type="button"
          className={styles.approvalNotice}
          // Not a tab stop in the way of the message box; the key and the click reach it.
          tabIndex={-1}
          onMouseDown={(e) => e.preventDefault()}
          onClick={() => focusPendingApproval()}
          data-testid="approval-notice"
          key={first.approvalId}
        >
          {count === 1 ? "An approval is waiting" : `${count} approvals are waiting`} · {APPROVAL_KEY} to answer
        </button>
      )}
    </>
  );
}
