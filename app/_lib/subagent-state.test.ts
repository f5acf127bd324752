import { describe, expect, it } from "vitest";
import type { SessionEvent, SessionEventBody } from "../../server/protocol/events";
import { applyEvents, emptySessionState } from "./session-state";

function stream(bodies: SessionEventBody[]): SessionEvent[] {
  return bodies.map(
    (b, i) =>
      ({ ...b, seq: i + 1, sessionId: "s1", at: new Date(1_700_000_000_000 + i).toISOString() }) as SessionEvent,
  );
}

const turn: SessionEventBody[] = [
  { type: "turn.started", turnId: "t1" },
  { type: "message.user", messageId: "m1", text: "explore" },
  {
    type: "tool.started",
    turnId: "t1",
    callId: "k1",
    name: "task",
    input: { description: "Find alpha" },
    summary: "Find alpha",
  },
  {
    type: "tool.started",
    turnId: "t1",
    callId: "k2",
    name: "task",
    input: { description: "Find beta" },
    summary: "Find beta",
  },
  { type: "tool.status", callId: "k1", status: "running" },
  { type: "tool.progress", callId: "k1", chunk: "Looking " },
  { type: "tool.progress", callId: "k1", chunk: "for alpha." },
  {
    type: "tool.started",
    turnId: "t1",
    callId: "r1",
    name: "read_file",
    input: { path: "a.ts" },
    summary: "a.ts",
    parentCallId: "k1",
  },
  {
    type: "tool.started",
    turnId: "t1",
    callId: "r2",
    name: "read_file",
    input: { path: "b.ts" },
    summary: "b.ts",
    parentCallId: "k2",
  },
  {
    type: "tool.finished",
    callId: "r1",
    status: "succeeded",
    output: "alpha",
    isError: false,
    truncated: false,
    durationMs: 3,
  },
  { type: "tool.progress", callId: "k1", chunk: "\nFound it." },
  {
    type: "tool.finished",
    callId: "k1",
    status: "succeeded",
    output: "alpha is in a.ts",
    isError: false,
    truncated: false,
    durationMs: 9,
  },
  { type: "turn.finished", turnId: "t1", status: "cancelled" },
];

describe("subagents in the chat state", () => {
  it("files a subagent's calls and text in its task card, in order, and keeps them out of the timeline", () => {
    const s = applyEvents(emptySessionState(), stream(turn));
    expect(s.items.filter((i) => i.kind === "tool").map((i) => (i as { callId: string }).callId)).toEqual(["k1", "k2"]);
    expect(s.tools.k1.sub).toEqual([
      { kind: "text", text: "Looking for alpha." },
      { kind: "tool", callId: "r1" },
      { kind: "text", text: "\nFound it." },
    ]);
    expect(s.tools.k2.sub).toEqual([{ kind: "tool", callId: "r2" }]);
    expect(s.tools.r1).toMatchObject({ parentCallId: "k1", status: "succeeded", output: "alpha" });
    // The turn's end closes a subagent's open call like any other card of the turn.
    expect(s.tools.r2.status).toBe("cancelled");
  });

  it("a call whose task card is not loaded shows in the timeline rather than vanish", () => {
    const s = applyEvents(emptySessionState(), stream([turn[0], turn[7]]));
    expect(s.items.map((i) => i.kind)).toEqual(["tool"]);
  });
});
