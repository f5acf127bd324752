// What the chat's live region reads: the finished turn's whole answer once, without markdown
// marks; an error when the turn said nothing; nothing before any turn has finished.
import { describe, expect, it } from "vitest";
import type { SessionEvent, SessionEventBody } from "../../../server/protocol/events";
import { applyEvents, emptySessionState } from "../../_lib/session-state";
import { finishedMessage } from "./chat-announcer";

const state = (bodies: SessionEventBody[]) =>
  applyEvents(
    emptySessionState(),
    bodies.map((b, i) => ({ ...b, seq: i + 1, sessionId: "s", at: new Date(0).toISOString() }) as SessionEvent),
  );

describe("the chat's announcement of a finished message", () => {
  it("is the turn's text, joined and without markdown marks, only once the turn ends", () => {
    const running: SessionEventBody[] = [
      { type: "turn.started", turnId: "t1" },
      { type: "message.user", messageId: "m1", text: "hi" },
      { type: "text.delta", turnId: "t1", text: "Done: **two** files " },
      { type: "text.delta", turnId: "t1", text: "changed in `src`." },
    ];
    expect(finishedMessage(state(running))).toBeUndefined();
    const done = state([...running, { type: "turn.finished", turnId: "t1", status: "completed" } as SessionEventBody]);
    expect(finishedMessage(done)).toEqual({ turnId: "t1", text: "Agent: Done: two files changed in src." });
  });

  it("says the turn ended with an error when it ended without text", () => {
    const s = state([
      { type: "turn.started", turnId: "t2" },
      { type: "message.user", messageId: "m2", text: "go" },
      { type: "error", code: "provider_error", message: "The provider refused the request." } as SessionEventBody,
      { type: "turn.finished", turnId: "t2", status: "failed" } as SessionEventBody,
    ]);
    expect(finishedMessage(s)?.text).toBe("The turn ended with an error: The provider refused the request.");
  });
});
