// Folding runs of stored deltas: what a rebuilt session needs, in fewer events.
import { describe, expect, it } from "vitest";
import { applyEvents, emptySessionState } from "../../app/_lib/session-state";
import type { SessionEvent, SessionEventBody } from "../protocol/events";
import { coalesce } from "./coalesce";

const log = (bodies: SessionEventBody[]): SessionEvent[] =>
  bodies.map((b, i) => ({ ...b, seq: i + 1, sessionId: "s", at: `2026-12-01T00:00:0${i % 10}.000Z` }) as SessionEvent);

describe("coalesce", () => {
  const events = log([
    { type: "turn.started", turnId: "t1" },
    { type: "reasoning.delta", turnId: "t1", text: "Think" },
    { type: "reasoning.delta", turnId: "t1", text: "ing." },
    { type: "text.delta", turnId: "t1", text: "Hel" },
    { type: "text.delta", turnId: "t1", text: "lo " },
    { type: "text.delta", turnId: "t1", text: "there." },
    { type: "tool.started", turnId: "t1", callId: "c1", name: "shell", input: {}, summary: "$ ls" },
    { type: "tool.progress", callId: "c1", chunk: "a\n" },
    { type: "tool.progress", callId: "c1", chunk: "b\n" },
    { type: "tool.progress", callId: "c2", chunk: "other call\n" },
    { type: "text.delta", turnId: "t1", text: "Done" },
    { type: "turn.finished", turnId: "t1", status: "completed" },
    { type: "text.delta", turnId: "t2", text: "Next " },
    { type: "text.delta", turnId: "t3", text: "turn" },
  ]);

  it("folds each run into one event carrying the run's last seq and time", () => {
    const folded = coalesce(events);
    expect(folded.map((e) => [e.type, e.seq])).toEqual([
      ["turn.started", 1],
      ["reasoning.delta", 3],
      ["text.delta", 6],
      ["tool.started", 7],
      ["tool.progress", 9],
      ["tool.progress", 10],
      ["text.delta", 11],
      ["turn.finished", 12],
      ["text.delta", 13],
      ["text.delta", 14],
    ]);
    expect(folded[2]).toMatchObject({ text: "Hello there.", at: events[5].at });
    expect(folded[4]).toMatchObject({ chunk: "a\nb\n" });
  });

  it("rebuilds the same chat as the events one by one, and leaves them unchanged", () => {
    const before = JSON.stringify(events);
    const one = applyEvents(emptySessionState(), events);
    const folded = applyEvents(emptySessionState(), coalesce(events));
    const withoutKeys = (s: typeof one) => ({ ...s, items: s.items.map(({ key: _key, ...rest }) => rest) });
    expect(withoutKeys(folded)).toEqual(withoutKeys(one));
    expect(JSON.stringify(events)).toBe(before);
  });
});
