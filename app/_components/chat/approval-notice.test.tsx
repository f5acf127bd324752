// A new approval card and its announcement, rendered as the page first shows them: the card's
// answers are off until it is armed (a key or click aimed at what was there before cannot
// answer it), nothing in it asks for focus, and the live region names the card and the key.
import { describe, expect, it } from "vitest";
import { renderToStaticMarkup } from "react-dom/server";
import type { ApprovalCard as Card } from "../../_lib/session-state";
import { ApprovalCard } from "./approval-card";
import { ApprovalNotice } from "./approval-notice";

const card: Card = {
  approvalId: "a1",
  callId: "c1",
  request: {
    tool: "shell",
    summary: "touch STOLEN_FOCUS_APPROVED",
    reason: "Runs a command.",
    command: "touch STOLEN_FOCUS_APPROVED",
  },
};

describe("a new approval card", () => {
  it("shows its answers disabled until armed and takes no focus", () => {
    const html = renderToStaticMarkup(<ApprovalCard card={card} onAnswer={async () => undefined} />);
    for (const id of ["approve-once", "approve-session", "reject"])
      expect(html).toMatch(new RegExp(`<button[^>]*disabled=""[^>]*data-testid="${id}"`));
    expect(html).not.toContain("data-armed");
    expect(html).not.toMatch(/autofocus/i);
    expect(html).toContain('data-state="pending"');
  });

  it("is announced in a live region with the key that goes to it, and in a visible notice", () => {
    const html = renderToStaticMarkup(<ApprovalNotice pending={[card, { ...card, approvalId: "a2" }]} />);
    expect(html).toMatch(
      /role="status" aria-live="assertive"[^>]*>Approval needed: touch STOLEN_FOCUS_APPROVED\. Ctrl\+Alt\+A goes to it\.</,
    );
    expect(html).toContain("2 approvals are waiting · Ctrl+Alt+A to answer");
    expect(html).toContain('tabindex="-1"');
    expect(renderToStaticMarkup(<ApprovalNotice pending={[]} />)).toMatch(/aria-live="assertive"[^>]*><\/div>$/);
  });
});
