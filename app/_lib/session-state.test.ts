import { describe, expect, it } from "vitest";
import type { SessionEvent, SessionEventBody } from "../../server/protocol/events";
import { applyEvent, applyEvents, emptySessionState, pendingApprovals, PROGRESS_CAP } from "./session-state";

function stream(bodies: SessionEventBody[], from = 1): SessionEvent[] {
  return bodies.map(
    (b, i) =>
      ({ ...b, seq: from + i, sessionId: "s1", at: new Date(1_700_000_000_000 + i).toISOString() }) as SessionEvent,
  );
}

const turnWithApproval: SessionEventBody[] = [
  { type: "message.user", messageId: "m1", text: "run the tests" },
  { type: "turn.started", turnId: "t1" },
  { type: "reasoning.delta", turnId: "t1", text: "I should " },
  { type: "reasoning.delta", turnId: "t1", text: "run npm test." },
  { type: "text.delta", turnId: "t1", text: "Running " },
  { type: "text.delta", turnId: "t1", text: "the tests." },
  {
    type: "tool.started",
    turnId: "t1",
    callId: "c1",
    name: "shell",
    input: { command: "npm test" },
    summary: "npm test",
  },
  {
    type: "approval.required",
    approvalId: "a1",
    callId: "c1",
    request: { tool: "shell", summary: "npm test", command: "npm test", reason: "runs code" },
  },
  { type: "approval.resolved", approvalId: "a1", callId: "c1", decision: "approved_once", by: "u1" },
  { type: "tool.status", callId: "c1", status: "running" },
  { type: "tool.progress", callId: "c1", chunk: "PASS a\n" },
  { type: "tool.progress", callId: "c1", chunk: "PASS b\n" },
  {
    type: "tool.finished",
    callId: "c1",
    status: "succeeded",
    output: "2 passed",
    isError: false,
    truncated: false,
    durationMs: 1200,
  },
  { type: "text.delta", turnId: "t1", text: "All green." },
  {
    type: "usage",
    turnId: "t1",
    usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 80, cacheWriteTokens: 0 },
  },
  {
    type: "usage",
    turnId: "t1",
    usage: { inputTokens: 150, outputTokens: 30, cacheReadTokens: 120, cacheWriteTokens: 5 },
    context: { tokens: 195, window: 200_000 },
  },
  { type: "turn.finished", turnId: "t1", status: "completed" },
];

describe("session state", () => {
  it("replays a whole turn into messages, a tool card and usage", () => {
    const s = applyEvents(emptySessionState(), stream(turnWithApproval));
    expect(s.items.map((i) => i.kind)).toEqual(["user", "reasoning", "text", "tool", "text", "turn-end"]);
    expect(s.items[1]).toMatchObject({ text: "I should run npm test." });
    expect(s.items[2]).toMatchObject({ text: "Running the tests." });
    expect(s.items[4]).toMatchObject({ text: "All green." });
    expect(s.tools.c1).toMatchObject({
      status: "succeeded",
      progress: "PASS a\nPASS b\n",
      output: "2 passed",
      durationMs: 1200,
      approvalId: "a1",
    });
    // Each usage event is the turn's total so far: the last one stands, it is not added up.
    expect(s.turns.t1).toMatchObject({
      status: "completed",
      usage: { inputTokens: 150, outputTokens: 30, cacheReadTokens: 120, cacheWriteTokens: 5 },
    });
    expect(s.context).toEqual({ tokens: 195, window: 200_000 });
    expect(s.activeTurnId).toBeNull();
    expect(s.lastSeq).toBe(turnWithApproval.length);
  });

  it("resumes without duplicates when the new subscription overlaps what was seen", () => {
    const all = stream(turnWithApproval);
    const once = applyEvents(emptySessionState(), all);
    // The first connection saw events 1..9; the resumed one replays from 6 (overlap) to the end.
    const first = applyEvents(emptySessionState(), all.slice(0, 9));
    const resumed = applyEvents(first, all.slice(5));
    expect(resumed).toEqual(once);
    // Seeing an already-applied event returns the same object (no re-render).
    expect(applyEvent(once, all[3])).toBe(once);
  });

  it("tracks the approval lifecycle: pending, answered, and survives a rebuild", () => {
    const events = stream(turnWithApproval.slice(0, 8));
    const pending = applyEvents(emptySessionState(), events);
    expect(pending.tools.c1.status).toBe("awaiting_approval");
    expect(pendingApprovals(pending).map((a) => a.approvalId)).toEqual(["a1"]);
    expect(pending.activeTurnId).toBe("t1");
    // A reload rebuilds from seq 0 and gets the same pending card.
    expect(applyEvents(emptySessionState(), events)).toEqual(pending);

    const rejected = applyEvents(
      pending,
      stream(
        [
          { type: "approval.resolved", approvalId: "a1", callId: "c1", decision: "rejected", message: "use pnpm" },
          {
            type: "tool.finished",
            callId: "c1",
            status: "rejected",
            output: "rejected: use pnpm",
            isError: true,
            truncated: false,
            durationMs: 0,
          },
          // A straggling status after the final one must not reopen the card.
          { type: "tool.status", callId: "c1", status: "running" },
        ],
        9,
      ),
    );
    expect(pendingApprovals(rejected)).toEqual([]);
    expect(rejected.approvals.a1).toMatchObject({ decision: "rejected", message: "use pnpm" });
    expect(rejected.tools.c1.status).toBe("rejected");
  });

  it("marks cards a finished turn left open as cancelled and clears the active turn", () => {
    const s = applyEvents(
      emptySessionState(),
      stream([
        { type: "turn.started", turnId: "t2" },
        { type: "tool.started", turnId: "t2", callId: "c9", name: "shell", input: {}, summary: "sleep 100" },
        { type: "tool.status", callId: "c9", status: "running" },
        { type: "turn.finished", turnId: "t2", status: "cancelled" },
      ]),
    );
    expect(s.tools.c9.status).toBe("cancelled");
    expect(s.activeTurnId).toBeNull();
    expect(s.turns.t2.status).toBe("cancelled");
  });

  it("keeps only the tail of very long live output, and records files, runner, notices and errors", () => {
    const big = "x".repeat(PROGRESS_CAP);
    const s = applyEvents(
      emptySessionState(),
      stream([
        { type: "turn.started", turnId: "t3" },
        { type: "tool.started", turnId: "t3", callId: "c3", name: "shell", input: {}, summary: "yes" },
        { type: "tool.progress", callId: "c3", chunk: big },
        { type: "tool.progress", callId: "c3", chunk: "END" },
        { type: "notice", level: "warn", code: "forged_call", text: "A tool call written as text was removed." },
        { type: "error", turnId: "t3", code: "provider", message: "overloaded" },
        { type: "files.changed", paths: ["a.ts"], version: 7 },
        { type: "runner.status", connected: false },
        { type: "tool.progress", callId: "unknown", chunk: "ignored" },
      ]),
    );
    expect(s.tools.c3.progress.length).toBe(PROGRESS_CAP);
    expect(s.tools.c3.progress.endsWith("END")).toBe(true);
    expect(s.items.filter((i) => i.kind === "notice" || i.kind === "error").map((i) => i.kind)).toEqual([
      "notice",
      "error",
    ]);
    expect(s.files).toEqual({ version: 7, paths: ["a.ts"] });
    expect(s.runner).toEqual({ connected: false, sandboxed: undefined });
  });

  it("marks where the conversation was summarized, and the context meter starts again from it", () => {
    const s = applyEvents(
      emptySessionState(),
      stream([
        { type: "turn.started", turnId: "t4" },
        {
          type: "usage",
          turnId: "t4",
          usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 },
          context: { tokens: 170_000, window: 200_000 },
        },
        { type: "notice", level: "info", code: "context_compacting", text: "Summarizing." },
        { type: "context.compacted", turnId: "t4", summary: "The user wants tests.", messages: 40, tokens: 170_000 },
      ]),
    );
    expect(s.items.map((i) => i.kind)).toEqual(["notice", "compacted"]);
    expect(s.items[1]).toMatchObject({ summary: "The user wants tests.", messages: 40, tokens: 170_000 });
    expect(s.context).toEqual({ tokens: 0, window: 200_000 });
  });

  it("keeps a message's images on its item, so a replay after a reload shows them again", () => {
    const images = [
      { id: "att_1", mediaType: "image/png" as const, bytes: 1200 },
      { id: "att_2", mediaType: "image/jpeg" as const, bytes: 48_000 },
    ];
    const events = stream([
      { type: "message.user", messageId: "m1", text: "what is wrong here?", images },
      { type: "turn.started", turnId: "t1" },
      { type: "turn.finished", turnId: "t1", status: "completed" },
      { type: "message.user", messageId: "m2", text: "", images: images.slice(1) },
      { type: "message.user", messageId: "m3", text: "no picture" },
      { type: "message.user", messageId: "m4", text: "none either", images: [] },
    ]);
    const s = applyEvents(emptySessionState(), events);
    expect(s.items[0]).toEqual({ kind: "user", key: "user-m1", text: "what is wrong here?", images });
    expect(s.items[2]).toEqual({ kind: "user", key: "user-m2", text: "", images: images.slice(1) });
    // Absent, not empty, when none: a message without images is the item it always was.
    expect(s.items[3]).toEqual({ kind: "user", key: "user-m3", text: "no picture" });
    expect(s.items[4]).toEqual({ kind: "user", key: "user-m4", text: "none either" });
    expect(applyEvents(emptySessionState(), events)).toEqual(s);
  });
});
