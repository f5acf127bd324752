// What a call cut off by a fault is reported as (issue 24, item 4): one that had started (its
// runner lost mid-call, or the server stopped while it ran) "was running; its effects are
// unknown", and only one that never started "did not run"; either way its card ends with a
// tool.finished. The server's kill -9 end to end is crash-calls.test.ts.
import { describe, expect, it } from "vitest";
import { ExecutorUnavailableError } from "../executors/contract";
import { testDatabases, useTestDb } from "../testing/db";
import { call, newTurn, request, ScriptedExecutor, usePipelines } from "../testing/pipeline";
import { INTERRUPTED_RUNNING, NOT_STARTED_AT_RESTART, settleInterruptedCalls } from "./interrupted";

describe.each(testDatabases())("calls cut off by a fault on %s", (provider) => {
  const t = useTestDb(provider);
  const setup = usePipelines(t);

  it.each([
    [
      true,
      /runner r1 disconnected while read_file was running.*It was running; its effects are unknown \(it may have partly run\): check them/,
    ],
    [false, /runner r1 is not connected The call did not run; try again once the runner is back\./],
  ])("a runner lost with the call started=%s says what is known and ends the card", async (started, wording) => {
    const reason = started
      ? "runner r1 disconnected while read_file was running (socket closed); its outcome is unknown."
      : "runner r1 is not connected";
    const exec = new ScriptedExecutor(() => ({ throws: new ExecutorUnavailableError(reason, started) }));
    const h = setup({ exec });
    const s = await newTurn(t.current);
    const out = await h.pipeline.dispatch(request(h, s, [call("read_file", { path: "a" })]));
    expect(out.results[0].isError).toBe(true);
    expect(out.results[0].content).toMatch(wording);
    if (started) expect(out.results[0].content).not.toMatch(/did not run/);
    const finished = h.events.filter((e) => e.event.type === "tool.finished").map((e) => e.event);
    expect(finished).toHaveLength(1);
    expect(finished[0]).toMatchObject({ status: "failed", isError: true, output: expect.stringMatching(wording) });
  });

  it("at recovery, a call that had started may have partly run and a queued one did not run; both cards end", async () => {
    const s = await newTurn(t.current);
    const db = t.current.db;
    const base = { sessionId: s.session.id, turnId: s.turn.id, name: "shell", input: { command: "make" } };
    const running = await db.toolCall.create({
      data: {
        ...base,
        providerCallId: "p_running",
        slot: 0,
        status: "running",
        startedAt: new Date(Date.now() - 5000),
      },
    });
    const queued = await db.toolCall.create({
      data: { ...base, providerCallId: "p_queued", slot: 1, status: "queued" },
    });
    const settled = await settleInterruptedCalls(db, s.turn.id);
    expect(settled.results.get("p_running")).toBe(INTERRUPTED_RUNNING);
    expect(INTERRUPTED_RUNNING).toMatch(
      /was running.*effects are unknown \(it may have partly run\).*check before retrying/,
    );
    expect(settled.results.get("p_queued")).toBe(NOT_STARTED_AT_RESTART);
    expect(NOT_STARTED_AT_RESTART).toMatch(/did not run/);
    expect(settled.events).toEqual([
      expect.objectContaining({
        type: "tool.finished",
        callId: running.id,
        status: "failed",
        output: INTERRUPTED_RUNNING,
      }),
      expect.objectContaining({
        type: "tool.finished",
        callId: queued.id,
        status: "failed",
        output: NOT_STARTED_AT_RESTART,
        durationMs: 0,
      }),
    ]);
    const rows = await db.toolCall.findMany({ where: { turnId: s.turn.id }, orderBy: { slot: "asc" } });
    expect(rows.map((r) => [r.status, r.result])).toEqual([
      ["failed", INTERRUPTED_RUNNING],
      ["failed", NOT_STARTED_AT_RESTART],
    ]);
  });
});
