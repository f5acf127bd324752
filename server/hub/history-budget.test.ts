// "Show earlier" under a byte budget (history.ts, history-read.ts), on real SQLite and
// PostgreSQL, through Prisma and the query thread's driver: big turns come fewer per answer,
// a turn over the budget comes in parts the IDE joins (app/_lib/earlier-parts.ts), reading
// stops within a page of the budget, and the chat rebuilt answer by answer is the whole log's.
// A viewer's parts are redacted as the one stream they were cut from.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import type { SessionEvent, SessionEventBody } from "../protocol/events";
import { coalesce } from "./coalesce";
import {
  createSessionHistory,
  prismaEventPages,
  type EarlierWindow,
  type EventPages,
  type SessionHistory,
} from "./history";
import { eventBytes } from "./history-read";
import { redactedEarlier } from "./earlier-redacted";
import { turnRowsFor } from "../db/turn-rows";
import { publishedSession } from "../testing/hub";
import { redactEventList } from "../auth/redact-stream";
import { leaks, SECRET_CASES } from "../auth/secrets.testdata";
import { applyEvents, emptySessionState, prependEarlier, windowState } from "../../app/_lib/session-state";
import { readEarlier } from "../../app/_lib/earlier-parts";

const KiB = 1024;

/** A turn of `calls` tool calls with `outKiB` of output each, and `words` streamed words of text. */
function bigTurn(i: number, calls: number, outKiB: number, words = 20): SessionEventBody[] {
  const turnId = `t${i}`;
  const text = (n: number) =>
    Array.from({ length: n }, (_, k): SessionEventBody => ({ type: "text.delta", turnId, text: `w${k} ` }));
  return [
    { type: "turn.started", turnId },
    { type: "message.user", messageId: `m${i}`, text: `ask ${i}` },
    ...text(words),
    ...Array.from({ length: calls }, (_, c): SessionEventBody[] => {
      const callId = `c${i}-${c}`;
      return [
        { type: "tool.started", turnId, callId, name: "shell", input: { command: "cat" }, summary: "$ cat" },
        ...Array.from({ length: 3 }, (): SessionEventBody => ({
          type: "tool.progress",
          callId,
          chunk: "p".repeat(KiB),
        })),
        {
          type: "tool.finished",
          callId,
          status: "succeeded",
          output: `${c % 10}`.repeat(outKiB * KiB),
          isError: false,
          truncated: false,
          durationMs: 3,
        },
      ];
    }).flat(),
    ...text(words),
    { type: "turn.finished", turnId, status: "completed" },
  ];
}

const answerBytes = (w: EarlierWindow) => w.events.reduce((n, ev) => n + eventBytes(ev), 0);

describe.each(testDatabases())("show earlier under a byte budget on %s", (provider) => {
  const t = useTestDb(provider);

  /** Runs `check` with events read through Prisma, then through the driver, each page's bytes counted. */
  async function bothReaders(budget: number, check: (h: SessionHistory, pageBytes: number[]) => Promise<void>) {
    const counted = (pages: EventPages, seen: number[]): EventPages => ({
      events: async (...args) => {
        const page = await pages.events(...args);
        seen.push(page.reduce((n, ev) => n + eventBytes(ev), 0));
        return page;
      },
    });
    const prisma: number[] = [];
    const db = t.current.db;
    await check(createSessionHistory(db, counted(prismaEventPages(db), prisma), { budget }), prisma);
    const rows = turnRowsFor(t.current.url);
    try {
      const driver: number[] = [];
      await check(createSessionHistory(db, counted(rows, driver), { budget }), driver);
    } finally {
      await rows.close();
    }
  }

  const session = (bodies: SessionEventBody[]) => publishedSession(t.current, bodies);

  /** The client's way: open at the latest `opened` turns, then "show earlier" until nothing is. */
  async function scrollBack(h: SessionHistory, sessionId: string, lastSeq: number, opened: number, read = h.earlier) {
    const answers: EarlierWindow[] = [];
    const w = await h.window(sessionId, opened);
    let s = applyEvents(windowState(w), await h.range(sessionId, w.afterSeq, lastSeq));
    while (s.earlier) {
      const joined = await readEarlier(async (before) => {
        const a = await read(sessionId, before, 40);
        answers.push(a);
        return a;
      }, s.earlier.afterSeq);
      s = prependEarlier(s, joined);
    }
    return { state: s, answers };
  }

  it("answers at most the budget, fewer turns when they are big, and rebuilds the whole chat", async () => {
    const budget = 256 * KiB;
    const bodies = [
      { type: "runner.status", connected: true, runnerId: "r1" } as SessionEventBody,
      ...Array.from({ length: 14 }, (_, i) => bigTurn(i, 3, 20)).flat(),
    ];
    const { sessionId, all } = await session(bodies);
    const whole = applyEvents(emptySessionState(), coalesce(all));
    expect(all.reduce((n, ev) => n + eventBytes(ev), 0)).toBeGreaterThan(3 * budget);

    await bothReaders(budget, async (h) => {
      const { state, answers } = await scrollBack(h, sessionId, all.at(-1)!.seq, 2);
      expect(state).toEqual(whole);
      expect(answers.length).toBeGreaterThan(2);
      for (const a of answers) {
        expect(a.partial).toBeUndefined();
        expect(answerBytes(a)).toBeLessThanOrEqual(budget);
        expect(JSON.stringify(a.events).length).toBeLessThanOrEqual(budget);
        // Whole turns: it starts at one (or the session's start).
        expect(a.events[0]).toMatchObject(a.afterSeq === 0 ? { seq: 1 } : { type: "turn.started" });
      }
    });
  });

  it("serves a turn over the budget in parts, latest first, that join into the whole turn", async () => {
    const budget = 96 * KiB;
    const bodies = [...bigTurn(0, 1, 4), ...bigTurn(1, 12, 20, 4_000), ...bigTurn(2, 1, 4)];
    const { sessionId, all } = await session(bodies);
    const whole = applyEvents(emptySessionState(), coalesce(all));
    const starts = all.filter((e) => e.type === "turn.started").map((e) => e.seq);

    await bothReaders(budget, async (h) => {
      const { state, answers } = await scrollBack(h, sessionId, all.at(-1)!.seq, 1);
      expect(state).toEqual(whole);
      const parts = answers.filter((a) => a.partial);
      expect(parts.length).toBeGreaterThan(4);
      // Parts follow each other back from the latest turn's start to the big turn's.
      expect(answers[0].events.at(-1)!.seq).toBe(starts[2] - 1);
      for (const [i, a] of answers.entries()) {
        expect(answerBytes(a)).toBeLessThanOrEqual(budget);
        if (i > 0) expect(a.events.at(-1)!.seq).toBe(answers[i - 1].afterSeq);
      }
      // The answer after the last part starts at the big turn (or, the turn before it fitting too, earlier).
      const after = answers[answers.findLastIndex((a) => a.partial) + 1];
      expect(after.partial).toBeUndefined();
      expect(after.afterSeq).toBeLessThanOrEqual(starts[1] - 1);
      expect(after.events.find((e) => e.type === "turn.started")).toMatchObject({
        seq: after.afterSeq === 0 ? starts[0] : starts[1],
      });
    });
  });

  it("stops reading once the budget is passed: never more than one page past it", async () => {
    const budget = 128 * KiB;
    const { sessionId, all } = await session([
      ...Array.from({ length: 30 }, (_, i) => bigTurn(i, 3, 20)).flat(),
      ...bigTurn(30, 40, 20),
    ]);
    const lastStart = all.findLast((e) => e.type === "turn.started")!.seq;
    const wholeBytes = all.reduce((n, ev) => n + eventBytes(ev), 0);

    await bothReaders(budget, async (h, pageBytes) => {
      for (const beforeSeq of [lastStart - 1, all.at(-1)!.seq]) {
        pageBytes.length = 0;
        const a = await h.earlier(sessionId, beforeSeq, 1_000);
        expect(answerBytes(a)).toBeLessThanOrEqual(budget);
        const read = pageBytes.reduce((n, b) => n + b, 0);
        expect(read - pageBytes.at(-1)!).toBeLessThanOrEqual(budget);
        // The pages grow from a few events, sized by what was read: the last passes by little.
        expect(read).toBeLessThan(2 * budget);
        expect(read).toBeLessThan(wholeBytes / 10);
      }
    });
  });

  it("redacts a viewer's parts as one stream: no secret across a cut, the same text as the whole turn's", async () => {
    const budget = 32 * KiB;
    const text = SECRET_CASES.map((c) => c.text).join("\n") + "\n";
    const pieces = Array.from({ length: 10 }, () => text.match(/[\s\S]{1,7}/g)!).flat();
    const { sessionId, all } = await session([
      ...bigTurn(0, 1, 1),
      { type: "turn.started", turnId: "t1" },
      ...pieces.map((p): SessionEventBody => ({ type: "text.delta", turnId: "t1", text: p })),
      { type: "turn.finished", turnId: "t1", status: "completed" },
      ...bigTurn(2, 1, 1),
    ]);
    const said = (events: readonly SessionEvent[]) =>
      events.flatMap((e) => (e.type === "text.delta" && e.turnId === "t1" ? [e.text] : [])).join("");
    const expected = said(redactEventList(all));

    await bothReaders(budget, async (h) => {
      const viewer = (id: string, before: number, turns: number) => redactedEarlier(h, id, before, turns);
      const { state, answers } = await scrollBack(h, sessionId, all.at(-1)!.seq, 1, viewer);
      expect(answers.filter((a) => a.partial).length).toBeGreaterThan(2);
      const shown = state.items.flatMap((i) => (i.kind === "text" && i.turnId === "t1" ? [i.text] : [])).join("");
      for (const c of SECRET_CASES) expect(leaks(shown, c.secret)).toBeUndefined();
      expect(shown).toBe(expected);
    });
  });
});
