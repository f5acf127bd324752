// Opening a long session at its latest turns (history.ts), on real SQLite and PostgreSQL: the
// window starts at a turn, counts the turns before it, carries the session-wide events from
// before it, and the earlier windows joined to it give the same chat as the whole log. Stored
// events read through Prisma and through the query thread's driver reads alike.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import type { SessionEventBody } from "../protocol/events";
import { coalesce } from "./coalesce";
import { createSessionHistory, type SessionHistory } from "./history";
import { turnRowsFor } from "../db/turn-rows";
import { publishedSession } from "../testing/hub";
import { applyEvents, emptySessionState, prependEarlier, windowState } from "../../app/_lib/session-state";

function turn(i: number): SessionEventBody[] {
  const turnId = `t${i}`;
  return [
    { type: "turn.started", turnId },
    { type: "message.user", messageId: `m${i}`, text: `ask ${i}` },
    ...Array.from({ length: 5 }, (_, k): SessionEventBody => ({ type: "text.delta", turnId, text: `w${k} ` })),
    { type: "tool.started", turnId, callId: `c${i}`, name: "shell", input: { command: "ls" }, summary: "$ ls" },
    { type: "tool.progress", callId: `c${i}`, chunk: "a\n" },
    { type: "tool.progress", callId: `c${i}`, chunk: "b\n" },
    {
      type: "tool.finished",
      callId: `c${i}`,
      status: "succeeded",
      output: "a\nb\n",
      isError: false,
      truncated: false,
      durationMs: 3,
    },
    { type: "turn.finished", turnId, status: "completed" },
  ];
}

describe.each(testDatabases())("session history windows on %s", (provider) => {
  const t = useTestDb(provider);

  /** Runs `check` with events read through Prisma, then through the driver (TurnRows.events). */
  async function bothReaders(check: (h: SessionHistory) => Promise<void>) {
    await check(createSessionHistory(t.current.db));
    const rows = turnRowsFor(t.current.url);
    try {
      await check(createSessionHistory(t.current.db, rows));
    } finally {
      await rows.close();
    }
  }

  const session = (bodies: SessionEventBody[]) => publishedSession(t.current, bodies);

  it("starts the window at the latest turns, with the turns before it counted and the session-wide events carried", async () => {
    const bodies: SessionEventBody[] = [
      { type: "runner.status", connected: true, runnerId: "r1", sandboxed: true },
      { type: "files.changed", paths: ["a.ts"], version: 1 },
      ...turn(0),
      { type: "files.changed", paths: ["b.ts"], version: 2 },
      ...turn(1),
      ...turn(2),
      ...turn(3),
    ];
    const { sessionId, all } = await session(bodies);
    const starts = all.filter((e) => e.type === "turn.started").map((e) => e.seq);

    await bothReaders(async (h) => {
      const w = await h.window(sessionId, 2);
      expect(w.afterSeq).toBe(starts[2] - 1);
      expect(w.earlierTurns).toBe(2);
      expect(w.carry.map((e) => [e.type, e.seq])).toEqual([
        ["runner.status", 1],
        ["files.changed", all.find((e) => e.type === "files.changed" && e.version === 2)!.seq],
      ]);

      // Fewer turns than the window: the whole session, nothing earlier.
      expect(await h.window(sessionId, 4)).toEqual({ afterSeq: 0, earlierTurns: 0, carry: [] });
      expect(await h.window(sessionId, 10)).toEqual({ afterSeq: 0, earlierTurns: 0, carry: [] });

      // The window before it: one turn, then the start of the session.
      const before = await h.earlier(sessionId, w.afterSeq, 1);
      expect(before.afterSeq).toBe(starts[1] - 1);
      expect(before.earlierTurns).toBe(1);
      expect(before.events[0]).toMatchObject({ type: "turn.started", turnId: "t1", seq: starts[1] });
      expect(before.events.at(-1)!.seq).toBe(w.afterSeq);
      const first = await h.earlier(sessionId, before.afterSeq, 1);
      expect(first.afterSeq).toBe(0);
      expect(first.events[0].seq).toBe(1);
      // The same instants the live events carried, whichever way they are read.
      expect(first.events[0].at).toBe(all[0].at);
      expect(before.events.find((e) => e.type === "tool.finished")).toEqual(
        all.find((e) => e.type === "tool.finished" && e.callId === "c1"),
      );
    });
  });

  it("rebuilds, window by window, the same chat as the whole log", async () => {
    const bodies = [
      { type: "runner.status", connected: true, runnerId: "r1" } as SessionEventBody,
      ...Array.from({ length: 7 }, (_, i) => turn(i)).flat(),
    ];
    const { sessionId, all } = await session(bodies);
    // What the IDE built before windows: the whole log, folded (item keys follow folded seqs).
    const whole = applyEvents(emptySessionState(), coalesce(all));

    await bothReaders(async (h) => {
      const w = await h.window(sessionId, 3);
      let s = applyEvents(windowState(w), await h.range(sessionId, w.afterSeq, all.at(-1)!.seq));
      expect(s.earlier).toEqual({ afterSeq: w.afterSeq, turns: 4 });
      expect(s.items.filter((i) => i.kind === "user")).toHaveLength(3);
      // The runner's status came before the window: carried, not lost.
      expect(s.runner).toEqual({ connected: true, sandboxed: undefined });
      while (s.earlier) s = prependEarlier(s, await h.earlier(sessionId, s.earlier.afterSeq, 3));
      expect(s).toEqual(whole);
    });
  });

  it("folds a range's runs of deltas and reads across database pages", async () => {
    const bodies = Array.from({ length: 1_200 }, (_, i): SessionEventBody => ({
      type: "text.delta",
      turnId: "t",
      text: `${i} `,
    }));
    const { sessionId } = await session([
      { type: "turn.started", turnId: "t" },
      ...bodies,
      { type: "turn.finished", turnId: "t", status: "completed" },
    ]);
    await bothReaders(async (h) => {
      const range = await h.range(sessionId, 1, 1_201);
      expect(range).toHaveLength(1);
      expect(range[0]).toMatchObject({ type: "text.delta", seq: 1_201 });
      expect((range[0] as { text: string }).text).toBe(bodies.map((b) => (b as { text: string }).text).join(""));
    });
  });
});
