// The writer thread's rows (event-rows.ts) on real SQLite and PostgreSQL: a run of deltas is
// written row by row from its text and lengths, and each row must be byte for byte the row its
// expanded event would have been (payload text, type, seq, time), in the order given, with
// other events between runs.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { seedSession } from "../testing/hub";
import type { SessionEvent } from "../protocol/events";
import { expandRun, RunBuilder, type DeltaRun, type RunnableDelta } from "./delta-run";
import { postgresEventRows, sqliteEventRows } from "./event-rows";
import { isoNow, msOfIso } from "./event-time";

const TEXTS = [
  "plain ",
  'a "quoted" \\ back',
  "line\nbreak\ttab",
  "",
  "😀 é ü",
  "\u2028\u2029",
  "\ud800 lone",
  "x".repeat(3000),
];

function run(sessionId: string, firstSeq: number): DeltaRun {
  const base = Date.UTC(2026, 11, 3, 9, 0, 0, 999);
  const events = TEXTS.map((text, i): RunnableDelta => ({
    type: "text.delta",
    turnId: "turn-1",
    text,
    seq: firstSeq + i,
    sessionId,
    // Across a second's boundary, several deltas in one millisecond.
    at: new Date(base + Math.floor(i / 3)).toISOString(),
  }));
  const builder = new RunBuilder(events[0]);
  for (const ev of events.slice(1)) builder.add(ev);
  return builder.snapshot();
}

const notice = (sessionId: string, seq: number): SessionEvent => ({
  type: "notice",
  level: "info",
  code: "n",
  text: "between",
  seq,
  sessionId,
  at: "2026-12-03T09:00:01.500Z",
});

describe("event times", () => {
  it("reads back the time it made without parsing, and only canonical ISO text otherwise", () => {
    const at = isoNow();
    expect(msOfIso(at)).toBe(Date.parse(at));
    expect(msOfIso("2026-01-01T00:00:00.123Z")).toBe(Date.UTC(2026, 0, 1, 0, 0, 0, 123));
    for (const bad of [
      "2026-01-01T00:00:00Z",
      "2026-01-01T00:00:00.123+00:00",
      "1969-12-31T23:59:59.999Z",
      "not a time",
      "",
    ])
      expect(msOfIso(bad)).toBeNaN();
  });
});

describe.each(testDatabases())("event rows on %s", (provider) => {
  const t = useTestDb(provider);

  it("writes a run's deltas as the rows its expanded events would be", async () => {
    const rows = provider === "sqlite" ? sqliteEventRows(t.current.url) : postgresEventRows(t.current.url);
    const [a, b] = [await seedSession(t.current.db), await seedSession(t.current.db)];
    const n = TEXTS.length;
    const asRuns = [run(a.sessionId, 1), notice(a.sessionId, n + 1), run(a.sessionId, n + 2)];
    const asEvents = [
      ...expandRun(run(b.sessionId, 1)),
      notice(b.sessionId, n + 1),
      ...expandRun(run(b.sessionId, n + 2)),
    ];
    await rows.insert(asRuns);
    await rows.insert(asEvents);
    await rows.close();
    const read = async (sessionId: string) =>
      provider === "sqlite"
        ? await t.current.db.$queryRawUnsafe<unknown[]>(
            `SELECT "seq","type","payload","createdAt" FROM "SessionEvent" WHERE "sessionId" = ? ORDER BY "seq"`,
            sessionId,
          )
        : await t.current.db.$queryRawUnsafe<unknown[]>(
            `SELECT "seq","type","payload"::text AS "payload","createdAt" FROM "SessionEvent" WHERE "sessionId" = $1 ORDER BY "seq"`,
            sessionId,
          );
    const [fromRuns, fromEvents] = [await read(a.sessionId), await read(b.sessionId)];
    expect(fromRuns).toHaveLength(2 * n + 1);
    expect(fromRuns).toEqual(fromEvents);
    const stored = await t.current.db.sessionEvent.findMany({
      where: { sessionId: a.sessionId },
      orderBy: { seq: "asc" },
    });
    // PostgreSQL's jsonb holds no unpaired surrogate: U+FFFD there, the batch still written.
    const kept = (s: string) => (provider === "postgresql" ? s.replace("\ud800", "\ufffd") : s);
    expect(stored.map((r) => (r.payload as { text: string }).text)).toEqual([...TEXTS, "between", ...TEXTS].map(kept));
    expect(stored[0].createdAt.toISOString()).toBe("2026-12-03T09:00:00.999Z");
    expect(stored[3].createdAt.toISOString()).toBe("2026-12-03T09:00:01.000Z");
  });
});
