import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../server/protocol/events";
import { applyEvents, emptySessionState, prependEarlier } from "./session-state";
import { rewoundTurns } from "./checkpoint-state";

// Issue #27's events as the server sends them; typed loosely so this test does not depend on
// when the protocol's union gains them.
function stream(bodies: Array<Record<string, unknown> & { type: string }>, from = 1): SessionEvent[] {
  return bodies.map(
    (b, i) =>
      ({
        ...b,
        seq: from + i,
        sessionId: "s1",
        at: new Date(1_700_000_000_000 + i).toISOString(),
      }) as unknown as SessionEvent,
  );
}

const turn = (n: number) => [
  { type: "turn.started", turnId: `t${n}` },
  { type: "message.user", messageId: `m${n}`, text: `change ${n}` },
  { type: "checkpoint.created", checkpointId: `b${n}`, turnId: `t${n}`, phase: "before", filesChanged: 0 },
  { type: "text.delta", turnId: `t${n}`, text: "done" },
  { type: "checkpoint.created", checkpointId: `a${n}`, turnId: `t${n}`, phase: "after", filesChanged: n === 2 ? 0 : n },
  { type: "turn.finished", turnId: `t${n}`, status: "completed" },
];

describe("checkpoint state", () => {
  it("ties each user message to its turn and counts the files each turn changed", () => {
    const s = applyEvents(emptySessionState(), stream([...turn(1), ...turn(2)]));
    expect(s.items.filter((i) => i.kind === "user").map((i) => i.kind === "user" && i.turnId)).toEqual(["t1", "t2"]);
    expect(s.checkpoints.changed).toEqual({ t1: 1, t2: 0 });
    expect(s.checkpoints.version).toBe(4);
  });

  it("marks rewound turns, unmarks them on undo, and replays to the same", () => {
    const events = stream([
      ...turn(1),
      ...turn(2),
      ...turn(3),
      { type: "turn.rewound", rewindId: "r1", turnIds: ["t2", "t3"] },
      { type: "turn.rewound", rewindId: "r2", turnIds: ["t3"] },
      { type: "turn.unrewound", rewindId: "r1", turnIds: ["t2", "t3"] },
    ]);
    const s = applyEvents(emptySessionState(), events);
    expect([...rewoundTurns(s.checkpoints)]).toEqual(["t3"]);
    expect(applyEvents(emptySessionState(), events)).toEqual(s);
    const mid = applyEvents(emptySessionState(), events.slice(0, -1));
    expect([...rewoundTurns(mid.checkpoints)].sort()).toEqual(["t2", "t3"]);
  });

  it("an undo in the loaded turns wins over its rewind in turns read later", () => {
    const early = stream([...turn(1), ...turn(2), { type: "turn.rewound", rewindId: "r1", turnIds: ["t2"] }]);
    const late = stream([...turn(3), { type: "turn.unrewound", rewindId: "r1", turnIds: ["t2"] }], early.length + 1);
    const afterSeq = early.length;
    const later = applyEvents({ ...emptySessionState(), lastSeq: afterSeq, earlier: { afterSeq, turns: 2 } }, late);
    expect([...rewoundTurns(later.checkpoints)]).toEqual([]);
    const whole = prependEarlier(later, { afterSeq: 0, earlierTurns: 0, carry: [], events: early });
    expect(whole.items.filter((i) => i.kind === "user")).toHaveLength(3);
    expect([...rewoundTurns(whole.checkpoints)]).toEqual([]);
    // Without the undo, the earlier rewind shows once those turns are read.
    const kept = prependEarlier(
      applyEvents({ ...emptySessionState(), lastSeq: afterSeq, earlier: { afterSeq, turns: 2 } }, late.slice(0, -1)),
      {
        afterSeq: 0,
        earlierTurns: 0,
        carry: [],
        events: early,
      },
    );
    expect([...rewoundTurns(kept.checkpoints)]).toEqual(["t2"]);
  });

  it("skips an event it does not know instead of losing the state", () => {
    const s = applyEvents(emptySessionState(), stream([...turn(1), { type: "something.new", x: 1 }]));
    expect(s.items.length).toBe(3);
    expect(s.lastSeq).toBe(7);
  });
});
