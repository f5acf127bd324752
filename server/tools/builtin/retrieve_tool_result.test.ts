import { afterAll, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../../testing/db";
import { bigOutputTool, call, type Harness, makePipeline, newTurn, request } from "../../testing/pipeline";
import { retrieveToolResultTool } from "./retrieve_tool_result";

describe.each(testDatabases())("retrieve_tool_result on %s", (provider) => {
  const t = useTestDb(provider);
  const harnesses: Harness[] = [];
  afterAll(async () => {
    for (const h of harnesses) await h.close();
  });
  const text = Array.from({ length: 20_000 }, (_, i) =>
    i % 1000 === 999 ? `FAIL test ${i + 1}` : `ok ${i + 1} é`,
  ).join("\n");

  async function spilled() {
    const h = makePipeline(t.current, {
      tools: [bigOutputTool(() => ({ output: text, kind: "shell" })), retrieveToolResultTool],
    });
    harnesses.push(h);
    const s = await newTurn(t.current);
    const out = await h.pipeline.dispatch(request(h, s, [call("big_output", {})]));
    const ref = /"ref":"(sp_[0-9a-f]{32})"/.exec(out.results[0].content)![1];
    const retrieve = async (args: Record<string, unknown>, session = s) =>
      (await h.pipeline.dispatch(request(h, session, [call("retrieve_tool_result", { ref, ...args })]))).results[0];
    return { h, s, ref, retrieve };
  }

  it("reads any byte slice and says where to continue", async () => {
    const { retrieve } = await spilled();
    const all = Buffer.from(text);
    let offset = 0;
    let rebuilt = "";
    // walk the whole output in 50,000-byte steps, as a model would
    while (offset < all.length) {
      const r = await retrieve({ offset, length: 50_000 });
      expect(r.isError).toBe(false);
      const [header, ...body] = r.content.split("\n");
      rebuilt += body.join("\n");
      const next = /continue with offset (\d+)/.exec(header);
      if (!next) break;
      offset = Number(next[1]);
    }
    expect(rebuilt).toBe(text);
  });

  it("reads line ranges and pattern matches", async () => {
    const { retrieve, ref } = await spilled();
    const lines = await retrieve({ start_line: 999, end_line: 1001 });
    expect(lines.content.split("\n")[0]).toBe(`[lines 999–1001 of 20,000 in ${ref}]`);
    expect(lines.content.split("\n").slice(1)).toEqual(["999\tok 999 é", "1000\tFAIL test 1000", "1001\tok 1001 é"]);
    const fails = await retrieve({ pattern: "^FAIL" });
    expect(fails.content).toMatch(/^\[20 line\(s\) matching/);
    expect(fails.content.split("\n")[20]).toBe("20000\tFAIL test 20000");
  });

  it("a catastrophically backtracking pattern returns promptly (RE2, linear time)", async () => {
    const evil = [
      "a".repeat(99_000) + "!",
      ...Array.from({ length: 2_000 }, (_, i) => `${"a".repeat(30 + (i % 10))}!`),
      "aaaa",
    ].join("\n");
    const h = makePipeline(t.current, {
      tools: [bigOutputTool(() => ({ output: evil, kind: "shell" })), retrieveToolResultTool],
    });
    harnesses.push(h);
    const s = await newTurn(t.current);
    const out = await h.pipeline.dispatch(request(h, s, [call("big_output", {})]));
    const ref = /"ref":"(sp_[0-9a-f]{32})"/.exec(out.results[0].content)![1];
    const started = performance.now();
    const r = (await h.pipeline.dispatch(request(h, s, [call("retrieve_tool_result", { ref, pattern: "(a+)+$" })])))
      .results[0];
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(r.isError).toBe(false);
    expect(r.content).toMatch(/^\[1 line\(s\) matching/);
    expect(r.content).toMatch(/\n2002\taaaa$/);
    const look = (await h.pipeline.dispatch(request(h, s, [call("retrieve_tool_result", { ref, pattern: "a(?=!)" })])))
      .results[0];
    expect(look.isError).toBe(true);
    expect(look.content).toMatch(/RE2 has no lookahead or lookbehind/);
    const back = (await h.pipeline.dispatch(request(h, s, [call("retrieve_tool_result", { ref, pattern: "(a)\\1" })])))
      .results[0];
    expect(back.content).toMatch(/RE2 has no backreferences/);
  });

  it("answers bad input clearly", async () => {
    const { retrieve, h } = await spilled();
    expect((await retrieve({ pattern: "(" })).content).toMatch(/not a valid regular expression/);
    expect((await retrieve({ offset: 10_000_000 })).content).toMatch(/past the end/);
    expect((await retrieve({ offset: 0, pattern: "x" })).content).toMatch(/either offset\/length or/);
    const other = await newTurn(t.current);
    expect((await retrieve({}, other)).content).toMatch(/No stored output/);
    expect(
      (await h.pipeline.dispatch(request(h, other, [call("retrieve_tool_result", { ref: "sp_bogus" })]))).results[0]
        .content,
    ).toMatch(/No stored output/);
  });
});
