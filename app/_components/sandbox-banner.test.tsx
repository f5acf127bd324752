// Unsandboxed by accident is said plainly: the banner names the runner's cause and the fix (or
// the opt-out), and an approval card for a command says it runs unsandboxed. Not when
// QUIVER_SANDBOX=off chose it (the card still says so), nor when commands are sandboxed.
import { describe, expect, it } from "vitest";
import { renderToStaticMarkup } from "react-dom/server";
import type { ApprovalCard as Card } from "../_lib/session-state";
import { SandboxStatusContext, type SandboxStatus } from "../_lib/sandbox-status";
import { ApprovalCard } from "./chat/approval-card";
import { SandboxBanner } from "./sandbox-banner";

const within = (status: SandboxStatus | undefined, node: React.ReactNode) =>
  renderToStaticMarkup(<SandboxStatusContext.Provider value={status}>{node}</SandboxStatusContext.Provider>);

const missing: SandboxStatus = { sandboxed: false, reason: "bubblewrap (bwrap) is not installed", network: "host" };
const card = {
  approvalId: "a",
  callId: "c",
  request: { tool: "shell", summary: "Run rm -rf build", reason: "Runs a command.", command: "rm -rf build" },
} as unknown as Card;

describe("the sandbox banner", () => {
  it("names the cause, what it means, the fix and the opt-out, and the network", () => {
    const html = within(missing, <SandboxBanner />);
    expect(html).toContain('data-testid="sandbox-banner"');
    expect(html).toContain("Bubblewrap (bwrap) is not installed");
    expect(html).toContain("run with your full rights");
    expect(html).toContain("apt-get install bubblewrap");
    expect(html).toContain("QUIVER_SANDBOX=off");
    expect(html).toContain("loopback included");
  });

  it("is absent when sandboxed, when unsandboxed was chosen, and before a runner connected", () => {
    expect(within({ sandboxed: true, network: "isolated" }, <SandboxBanner />)).toBe("");
    expect(within({ sandboxed: false, reason: "disabled by configuration" }, <SandboxBanner />)).toBe("");
    expect(within(undefined, <SandboxBanner />)).toBe("");
  });
});

describe("an approval card for a command", () => {
  it("says it runs unsandboxed, with the cause, on an unsandboxed runner (chosen or not)", () => {
    const html = within(missing, <ApprovalCard card={card} onAnswer={async () => undefined} />);
    expect(html).toContain('data-testid="approval-unsandboxed"');
    expect(html).toContain("Runs unsandboxed, with your full rights (bubblewrap (bwrap) is not installed)");
    expect(
      within(
        { sandboxed: false, reason: "disabled by configuration" },
        <ApprovalCard card={card} onAnswer={async () => undefined} />,
      ),
    ).toContain("Runs unsandboxed");
  });

  it("says nothing of the kind on a sandboxed runner", () => {
    expect(within({ sandboxed: true }, <ApprovalCard card={card} onAnswer={async () => undefined} />)).not.toContain(
      "unsandboxed",
    );
  });
});
