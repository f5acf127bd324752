// When Enter queues rather than sends: a turn runs as far as this page can tell, from the
// session's events, a send on its way, or the turn a send started that the events have not
// shown yet (its answer and the events come on different connections, in no set order).
import { describe, expect, it } from "vitest";
import type { SessionEvent, SessionEventBody } from "../../../server/protocol/events";
import { applyEvents, emptySessionState } from "../../_lib/session-state";
import { refusedBusy, turnBusy } from "./use-send";

const events = (bodies: SessionEventBody[]) =>
  bodies.map((b, i) => ({ ...b, seq: i + 1, sessionId: "s", at: new Date(0).toISOString() }) as SessionEvent);

describe("turnBusy", () => {
  const all = events([
    { type: "turn.started", turnId: "t1" },
    { type: "message.user", messageId: "m1", text: "first" },
    { type: "turn.finished", turnId: "t1", status: "completed" },
    { type: "turn.started", turnId: "t2" },
    { type: "message.user", messageId: "m2", text: "second" },
    { type: "turn.finished", turnId: "t2", status: "completed" },
  ]);
  const after = (n: number) => applyEvents(emptySessionState(), all.slice(0, n));

  it("counts the turn a send started as running until its events show it end", () => {
    // t2's send answered before any of its events arrived: not idle, though no turn is active.
    expect(after(3).activeTurnId).toBeNull();
    expect(turnBusy(after(3), 0, "t2")).toBe(true);
    expect(turnBusy(after(4), 0, "t2")).toBe(true);
    expect(turnBusy(after(6), 0, "t2")).toBe(false);
    // Without knowing of the send, the same state reads as idle: the window the message fell in.
    expect(turnBusy(after(3), 0, undefined)).toBe(false);
  });

  it("counts a send on its way, and the events' active turn", () => {
    expect(turnBusy(after(3), 1, undefined)).toBe(true);
    expect(turnBusy(after(1), 0, undefined)).toBe(true);
    expect(turnBusy(after(3), 0, "t1")).toBe(false);
  });
});

describe("refusedBusy", () => {
  it("tells the server's refusal because a turn runs from other failures", () => {
    expect(refusedBusy({ message: "busy", data: { code: "CONFLICT" } })).toBe(true);
    expect(refusedBusy({ message: "down", data: { code: "SERVICE_UNAVAILABLE" } })).toBe(false);
    expect(refusedBusy(new Error("network"))).toBe(false);
    expect(refusedBusy(undefined)).toBe(false);
  });
});
