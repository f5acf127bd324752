// The doom-loop guard (issue 23, item 1): only the same call back to back with nothing changed in
// between is blocked, within one turn; failure counts start over with each turn; nothing is
// seeded from the calls of earlier turns or an earlier process.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import { call, makePipeline, newTurn, request, usePipelines } from "../testing/pipeline";

describe.each(testDatabases())("loop guard on %s", (provider) => {
  const t = useTestDb(provider);
  const setup = usePipelines(t);
  let version = 1;
  const withVersion = () => setup({ deps: { workspaceVersion: () => version } });
  const allowShell = (orgId: string) =>
    t.current.db.orgPolicy.create({
      data: {
        orgId,
        version: 1,
        rules: [
          { effect: "allow", tool: "shell" },
          { effect: "allow", tool: "write_file" },
        ],
      },
    });
  const npmTest = () => call("shell", { command: "npm test" });
  const nextTurn = (s: Awaited<ReturnType<typeof newTurn>>) =>
    t.current.db.turn.create({ data: { sessionId: s.session.id } }).then((turn) => ({ ...s, turn }));

  it("a third npm test after an edit in between runs; so does one after the workspace moved", async () => {
    const h = withVersion();
    const s = await newTurn(t.current);
    await allowShell(s.org.id);
    const out = await h.pipeline.dispatch(
      request(h, s, [npmTest(), npmTest(), call("write_file", { path: "a.ts", content: "fix" }), npmTest()]),
    );
    expect(out.results.map((r) => r.isError)).toEqual([false, false, false, false]);
    const again = await h.pipeline.dispatch(request(h, s, [npmTest()]));
    expect(again.results[0].isError).toBe(false);
    // npm test, npm test (above), then the runner reports a changed file: the next one runs
    version++;
    const afterChange = await h.pipeline.dispatch(request(h, s, [npmTest()]));
    expect(afterChange.results[0].isError).toBe(false);
    expect(h.exec.calls.filter((c) => c.op === "shell")).toHaveLength(5);
  });

  it("a third read_file of a file that changed in between runs", async () => {
    const h = withVersion();
    const s = await newTurn(t.current);
    const read = () => call("read_file", { path: "src/a.ts" });
    await h.pipeline.dispatch(request(h, s, [read(), read()]));
    version++;
    const out = await h.pipeline.dispatch(request(h, s, [read()]));
    expect(out.results[0].isError).toBe(false);
    expect(h.exec.calls).toHaveLength(3);
  });

  it("the third identical call back to back with nothing changed is blocked with a respond error", async () => {
    const h = withVersion();
    const s = await newTurn(t.current);
    await allowShell(s.org.id);
    const out = await h.pipeline.dispatch(request(h, s, [npmTest(), npmTest(), npmTest()]));
    expect(out.results.map((r) => r.isError)).toEqual([false, false, true]);
    expect(out.results[2].content).toMatch(/third call in a row of shell with exactly the same arguments/);
    expect(out.halt).toBeUndefined();
    expect(h.exec.calls).toHaveLength(2);
    const row = await t.current.db.toolCall.findFirst({ where: { turnId: s.turn.id, slot: 2 } });
    expect(row?.status).toBe("blocked");
  });

  it("polling a command that is still running is no loop: its output changes between polls", async () => {
    const h = withVersion();
    h.exec.setScript(() => ({ result: { ok: true, output: "more output", meta: { running: true } } }));
    const s = await newTurn(t.current);
    await allowShell(s.org.id);
    const poll = () => call("shell", { command: "poll sh_ab12cd" });
    const out = await h.pipeline.dispatch(request(h, s, [poll(), poll(), poll(), poll()]));
    expect(out.results.map((r) => r.isError)).toEqual([false, false, false, false]);
    // once it has finished, the same call three times in a row is a loop again
    h.exec.setScript(() => ({ result: { ok: true, output: "done" } }));
    const done = await h.pipeline.dispatch(request(h, s, [poll(), poll(), poll()]));
    expect(done.results.map((r) => r.isError)).toEqual([false, false, true]);
  });

  it("counts are per turn and never seeded from stored calls (a new turn, a restarted server)", async () => {
    const h = withVersion();
    const s = await newTurn(t.current);
    await allowShell(s.org.id);
    await h.pipeline.dispatch(request(h, s, [npmTest(), npmTest()]));
    const s2 = await nextTurn(s);
    expect((await h.pipeline.dispatch(request(h, s2, [npmTest()]))).results[0].isError).toBe(false);
    // a fresh process over the same database: the stored calls do not count
    const restarted = makePipeline(t.current, { deps: { workspaceVersion: () => version } });
    try {
      const out = await restarted.pipeline.dispatch(request(restarted, s2, [npmTest()]));
      expect(out.results[0].isError).toBe(false);
      expect(restarted.exec.calls).toHaveLength(1);
    } finally {
      await restarted.close();
    }
  });

  it("after a halt at 8 failures, the next turn runs its first failing call normally", async () => {
    const h = withVersion();
    h.exec.setScript(() => ({ result: { ok: false, output: "No such file" } }));
    const s = await newTurn(t.current);
    const fails = Array.from({ length: 9 }, (_, i) => call("shell", { command: `cat missing-${i}` }));
    const r = await h.pipeline.dispatch(request(h, s, fails));
    expect(r.halt?.reason).toMatch(/8 tool calls in a row failed/);
    const before = h.exec.calls.length;
    const s2 = await nextTurn(s);
    const next = await h.pipeline.dispatch(request(h, s2, [call("shell", { command: "cat missing-again" })]));
    expect(next.halt).toBeUndefined();
    expect(next.results[0].isError).toBe(true);
    expect(next.results[0].content).toBe("No such file");
    expect(h.exec.calls.length).toBe(before + 1);
  });
});
