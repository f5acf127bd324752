// Joining a turn's parts (earlier-parts.ts): runs cut between parts are folded where they meet,
// the last part's window is kept, and an answer that does not move back is not followed.
import { describe, expect, it } from "vitest";
import type { SessionEvent, SessionEventBody } from "../../server/protocol/events";
import { joinParts, readEarlier } from "./earlier-parts";
import type { EarlierWindow } from "./session-state";

const ev = (seq: number, body: SessionEventBody) => ({ ...body, seq, sessionId: "s", at: `t${seq}` }) as SessionEvent;
const text = (seq: number, t: string) => ev(seq, { type: "text.delta", turnId: "t1", text: t });
const out = (seq: number, chunk: string) => ev(seq, { type: "tool.progress", callId: "c1", chunk });

describe("a turn read in parts", () => {
  it("folds a run cut between parts where they meet, and leaves other neighbours apart", () => {
    expect(
      joinParts([
        [ev(1, { type: "turn.started", turnId: "t1" }), text(3, "ab")],
        [text(5, "cd"), out(6, "x")],
        [out(7, "y")],
      ]),
    ).toEqual([ev(1, { type: "turn.started", turnId: "t1" }), text(5, "abcd"), out(7, "xy")]);
    expect(joinParts([[text(1, "a")], [ev(2, { type: "text.delta", turnId: "t2", text: "b" })]])).toHaveLength(2);
  });

  it("asks back part by part and keeps the window of the part that starts the turn", async () => {
    const answers: Record<number, EarlierWindow> = {
      9: { afterSeq: 6, earlierTurns: 1, carry: [], events: [text(9, "cd")], partial: true },
      6: {
        afterSeq: 2,
        earlierTurns: 1,
        carry: [],
        events: [ev(3, { type: "turn.started", turnId: "t1" }), text(6, "ab")],
      },
    };
    const asked: number[] = [];
    const w = await readEarlier(async (before) => (asked.push(before), answers[before]), 9);
    expect(asked).toEqual([9, 6]);
    expect(w).toEqual({ ...answers[6], events: [answers[6].events[0], text(9, "abcd")] });

    const stuck = { afterSeq: 9, earlierTurns: 0, carry: [], events: [text(9, "a")], partial: true };
    await expect(readEarlier(async () => stuck, 9)).rejects.toThrow(/no earlier part/);
  });
});
