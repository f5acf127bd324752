// A destructive command's approval card says so in a mark and words (not colour alone), and its
// session button says in plain words what it allows; the requests come from the server's own
// card builder, so the classifier and the card are tested together.
import { describe, expect, it, vi } from "vitest";
import { renderToStaticMarkup } from "react-dom/server";
import { approvalCard } from "../../../server/pipeline/card";
import { shellTool } from "../../../server/tools/builtin/shell";
import type { SessionEvent, SessionEventBody } from "../../../server/protocol/events";
import { applyEvents, emptySessionState } from "../../_lib/session-state";
import { ApprovalCard } from "./approval-card";

vi.mock("next/dynamic", () => ({ default: () => () => null }));
const { ToolCardView } = await import("./tool-card");

const render = (command: string) =>
  renderToStaticMarkup(
    <ApprovalCard
      card={{
        approvalId: "a",
        callId: "c",
        request: approvalCard(shellTool, { command }, "Runs a command in your workspace."),
      }}
      onAnswer={async () => undefined}
    />,
  );

function card(bodies: SessionEventBody[]): string {
  const s = applyEvents(
    emptySessionState(),
    bodies.map(
      (b, i) => ({ ...b, seq: i + 1, sessionId: "s", at: new Date(Date.now() - 5000).toISOString() }) as SessionEvent,
    ),
  );
  const c = s.tools.c;
  return renderToStaticMarkup(
    <ToolCardView
      card={c}
      approval={c.approvalId ? s.approvals[c.approvalId] : undefined}
      onAnswer={async () => undefined}
      onViewSpill={() => {}}
    />,
  );
}
const started: SessionEventBody = {
  type: "tool.started",
  turnId: "t",
  callId: "c",
  name: "shell",
  input: { command: "rm -rf build" },
  summary: "$ rm -rf build",
};

describe("approval and tool cards for destructive and plain commands", () => {
  it("marks rm -rf with a warning sign and the words, and names exactly what a session approval allows", () => {
    const html = render("rm -rf build web/old");
    expect(html).toMatch(
      /data-testid="approval-destructive"[^>]*>.*⚠.*Destructive command:<\/strong> <span>it deletes files and folders/,
    );
    expect(html).toMatch(/data-testid="approve-session"[^>]*>Allow exactly this command: rm -rf build web\/old</);
  });

  it("a harmless command has no mark, and its session button allows the program with any arguments", () => {
    const html = render("echo hello");
    expect(html).not.toContain("approval-destructive");
    expect(html).toMatch(/data-testid="approve-session"[^>]*>Allow `echo` with any arguments for this session</);
  });

  it("a compound command lists each thing allowed under the button", () => {
    const html = render("echo a && rm -rf build web/old");
    expect(html).toMatch(/data-testid="approve-session"[^>]*>Approve for this session \(see below\)</);
    expect(html).toMatch(
      /<li>Allow `echo` with any arguments for this session<\/li><li>Allow exactly this command: rm -rf build web\/old<\/li>/,
    );
  });

  it("the tool card of a destructive call is marked, its header is a button with aria-expanded, and running shows elapsed time and output size", () => {
    const asked: SessionEventBody = {
      type: "approval.required",
      approvalId: "a",
      callId: "c",
      request: approvalCard(shellTool, { command: "rm -rf build" }, "Runs a command."),
    };
    const html = card([
      started,
      asked,
      { type: "approval.resolved", approvalId: "a", callId: "c", decision: "approved_once" },
      { type: "tool.status", callId: "c", status: "running" },
      { type: "tool.progress", callId: "c", chunk: "x".repeat(2048) },
    ]);
    expect(html).toMatch(/data-destructive="true"/);
    expect(html).toMatch(/data-testid="tool-destructive-tag"[^>]*>.*destructive</);
    expect(html).toMatch(/<button type="button"[^>]*aria-expanded="true"[^>]*data-testid="tool-toggle"/);
    expect(html).toMatch(/data-testid="tool-elapsed"[^>]*>[5-9] s</);
    expect(html).toMatch(/data-testid="tool-output-size"[^>]*>2\.0 KB output</);
  });

  it("a failure written for the model shows the person's note, and the model's text only behind a toggle", () => {
    const told = "The question is empty: write the question you want answered.";
    const html = card([
      started,
      {
        type: "tool.finished",
        callId: "c",
        status: "failed",
        output: told,
        isError: true,
        truncated: false,
        durationMs: 1,
        note: "The question is empty.",
        modelText: told,
      },
    ]);
    expect(html).toMatch(/data-testid="tool-note"[^>]*>The question is empty\.</);
    expect(html).not.toContain('data-testid="tool-output"');
    expect(html).toMatch(
      /<details[^>]*data-testid="tool-model-text"><summary>What the model was told<\/summary><pre>The question is empty: write/,
    );
  });
});
