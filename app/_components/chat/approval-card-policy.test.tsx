// An approval card for a command the org policy could not check says so on a line of its own
// (issue 22: `eval "$x"`, `$(…)` as the program, a pipe into a shell, under a rule that could match).
import { describe, expect, it } from "vitest";
import { renderToStaticMarkup } from "react-dom/server";
import { ApprovalCard } from "./approval-card";

const request = {
  tool: "shell",
  summary: "$ touch y; X=git; $X push",
  reason: "Approval required: the org policy could not check every command.",
  command: "touch y; X=git; $X push",
};

describe("an approval card the policy could not check", () => {
  it("says what it could not check, and why", () => {
    const unchecked = "The org policy could not check `$X push` (the program is only known at run time).";
    const html = renderToStaticMarkup(
      <ApprovalCard
        card={{ approvalId: "a", callId: "c", request: { ...request, policyUnchecked: unchecked } }}
        onAnswer={async () => undefined}
      />,
    );
    expect(html).toMatch(
      /data-testid="approval-policy-unchecked"[^>]*>The org policy could not check `\$X push` \(the program is only known at run time\)\.</,
    );
  });

  it("has no such line otherwise", () => {
    const html = renderToStaticMarkup(
      <ApprovalCard card={{ approvalId: "a", callId: "c", request }} onAnswer={async () => undefined} />,
    );
    expect(html).not.toContain("approval-policy-unchecked");
  });
});
