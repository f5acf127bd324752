// An edit's tool card from replayed events: the diff the runner applied with the file's line
// numbers, the approval's proposal until then (shown once, not on both cards), and the snippet
// view for sessions recorded before edits carried a diff.
import { describe, expect, it, vi } from "vitest";
import { renderToStaticMarkup } from "react-dom/server";
import type { SessionEvent, SessionEventBody } from "../../../server/protocol/events";
import { applyEvents, emptySessionState } from "../../_lib/session-state";
import { diffRows } from "./diff-text";

vi.mock("next/dynamic", () => ({ default: () => () => <div data-testid="snippet-diff" /> }));
const { ToolCardView } = await import("./tool-card");

const DIFF = [
  "--- a/a.ts",
  "+++ b/a.ts",
  "@@ -18,7 +18,7 @@",
  " line 18",
  " line 19",
  " line 20",
  "-line 21",
  "+LINE 21",
  " line 22",
  " line 23",
  " line 24",
  "",
].join("\n");
const edit = { path: "a.ts", old_string: "line 21\n", new_string: "LINE 21\n" };
const started: SessionEventBody = {
  type: "tool.started",
  turnId: "t",
  callId: "c",
  name: "edit_file",
  input: edit,
  summary: "Edit a.ts",
};
const asked: SessionEventBody = {
  type: "approval.required",
  approvalId: "a",
  callId: "c",
  request: { tool: "edit_file", summary: "Edit a.ts", reason: "Edits a file.", diff: DIFF },
};
const done = (diff?: string): SessionEventBody => ({
  type: "tool.finished",
  callId: "c",
  status: "succeeded",
  output: "Edited a.ts",
  isError: false,
  truncated: false,
  durationMs: 3,
  ...(diff ? { diff } : {}),
});

function render(bodies: SessionEventBody[]): string {
  const s = applyEvents(
    emptySessionState(),
    bodies.map((b, i) => ({ ...b, seq: i + 1, sessionId: "s", at: new Date(0).toISOString() }) as SessionEvent),
  );
  const card = s.tools.c;
  const approval = card.approvalId ? s.approvals[card.approvalId] : undefined;
  return renderToStaticMarkup(
    <ToolCardView card={card} approval={approval} onAnswer={async () => undefined} onViewSpill={() => {}} />,
  );
}
const count = (html: string, needle: string) => html.split(needle).length - 1;

describe("an edit's tool card", () => {
  it("shows the applied diff with the file's own line numbers when no approval was asked", () => {
    const html = render([started, done(DIFF)]);
    expect(html).toContain('data-source="applied"');
    expect(html).toContain("@@ -18,7 +18,7 @@");
    expect(html).toContain('data-testid="diff-new-line">21</span><span>+LINE 21</span>');
    expect(html).toMatch(
      /data-testid="diff-old-line">21<\/span><span [^>]*data-testid="diff-new-line"><\/span><span>-line 21</,
    );
    expect(html).not.toContain("snippet-diff");
  });

  it("says where the whole change is when the runner cut the applied diff, and nothing when it did not", () => {
    const cut = `${DIFF}… diff cut: 2,400 more lines (96000 characters) not shown\n`;
    expect(render([started, done(cut)])).toContain('data-testid="edit-diff-cut"');
    expect(render([started, done(DIFF)])).not.toContain("edit-diff-cut");
  });

  it("shows the diff once: on the approval card while it asks, on the tool card after", () => {
    expect(count(render([started, asked]), 'data-testid="diff-text"')).toBe(1);
    expect(render([started, asked])).not.toContain("edit-diff");
    const approved = render([
      started,
      asked,
      { type: "approval.resolved", approvalId: "a", callId: "c", decision: "approved_once" },
      { type: "tool.status", callId: "c", status: "running" },
    ]);
    expect(count(approved, 'data-testid="diff-text"')).toBe(1);
    expect(approved).toContain('data-source="proposed"');
    expect(approved).not.toContain("not applied");
    const rejected = render([
      started,
      asked,
      { type: "approval.resolved", approvalId: "a", callId: "c", decision: "rejected" },
      {
        type: "tool.finished",
        callId: "c",
        status: "rejected",
        output: "Rejected",
        isError: true,
        truncated: false,
        durationMs: 0,
      },
    ]);
    expect(rejected).toContain("Proposed change (not applied)");
  });

  it("falls back to the snippets for a session recorded before edits carried a diff", () => {
    const html = render([started, done()]);
    expect(html).toContain("snippet-diff");
    expect(html).not.toContain("edit-diff");
  });
});

describe("diff rows", () => {
  it("numbers each side from the hunk header, and a removed line starting with -- stays a removal", () => {
    const rows = diffRows(
      "--- a/x.sql\n+++ b/x.sql\n@@ -5,3 +5,2 @@\n a\n--- comment\n b\n\\ No newline at end of file\n… diff cut: 3 more lines (40 characters) not shown\n",
    );
    expect(rows.map((r) => [r.kind, r.old ?? null, r.new ?? null])).toEqual([
      ["head", null, null],
      ["head", null, null],
      ["hunk", null, null],
      ["ctx", 5, 5],
      ["del", 6, null],
      ["ctx", 7, 6],
      ["note", null, null],
      ["note", null, null],
    ]);
  });
});
