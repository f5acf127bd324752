// The order rule of early starts, on the pipeline alone (real databases, scripted executor): a
// read-only call never starts early behind a call of the same response that may write (a file
// writer, a shell command that writes, an external tool that is not read-only), also when the
// calls' arguments interleave; read-only neighbours still start early, together; and the
// dispatch discards an early run that a write earlier in its calls makes stale.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { testDatabases, useTestDb } from "../testing/db";
import { defineTool } from "../tools/tool";
import {
  call,
  newTurn,
  readTool,
  request,
  ScriptedExecutor,
  shellTool,
  usePipelines,
  waitFor,
} from "../testing/pipeline";

const autoWriter = defineTool({
  name: "write_file",
  description: "Writes a file.",
  input: z.object({ path: z.string(), content: z.string() }),
  capabilities: ["WritesFiles"],
  executor: "runner",
  approvalFor: () => "auto",
  async execute(input, ctx) {
    const r = await ctx.remote(input);
    return { output: r.output, isError: !r.ok };
  },
});

/** Shaped like an MCP tool without readOnlyHint from a trusted server, allowed by the org. */
const externalWriter = defineTool({
  name: "notes_append",
  description: "Appends a note (external).",
  input: z.object({ text: z.string() }),
  capabilities: [],
  executor: "server",
  approvalFor: () => "auto",
  async execute(input) {
    ran.push("notes_append");
    return { output: `appended ${input.text}`, kind: "text" as const };
  },
});

/** Every start, runner or in-process, in the order it happened. */
const ran: string[] = [];
const settle = () => new Promise((r) => setTimeout(r, 150));

describe.each(testDatabases())("early starts keep a response's order on %s", (provider) => {
  const t = useTestDb(provider);
  const setup = usePipelines(t);
  const make = () => {
    ran.length = 0;
    const exec = new ScriptedExecutor((req) => ({
      delayMs: (ran.push(req.op), 20),
      result: { ok: true, output: `${req.op} ${JSON.stringify(req.input)}` },
    }));
    return { exec, h: setup({ exec, tools: [readTool, shellTool, autoWriter, externalWriter] }) };
  };

  it.each([
    ["write_file", () => call("write_file", { path: "a.txt", content: "x" })],
    ["a shell command that writes", () => call("shell", { command: "echo x > a.txt" })],
    ["an external tool that is not read-only", () => call("notes_append", { text: "x" })],
  ])("no early read behind %s; the read runs after it in the dispatch", async (_what, writer) => {
    const { exec, h } = make();
    const s = await newTurn(t.current);
    const w = writer();
    const r = call("read_file", { path: "a.txt" });
    h.pipeline.onArgumentsProgress(s.session.id, s.turn.id, { ...w, rawArguments: "", complete: false });
    h.pipeline.onArgumentsProgress(s.session.id, s.turn.id, { ...w, complete: true });
    h.pipeline.onArgumentsProgress(s.session.id, s.turn.id, { ...r, complete: true });
    await settle();
    expect(exec.calls).toHaveLength(0);
    const out = await h.pipeline.dispatch(request(h, s, [w, r]));
    expect(out.results.map((x) => x.isError)).toEqual([false, false]);
    expect(ran).toEqual([w.name, "read_file"]);
  });

  it("interleaved arguments: a read whose earlier writer is still streaming does not start", async () => {
    const { exec, h } = make();
    const s = await newTurn(t.current);
    const w = call("write_file", { path: "b.txt", content: "x" });
    const r = call("read_file", { path: "b.txt" });
    h.pipeline.onArgumentsProgress(s.session.id, s.turn.id, { ...w, rawArguments: "", complete: false });
    h.pipeline.onArgumentsProgress(s.session.id, s.turn.id, { ...r, complete: true });
    h.pipeline.onArgumentsProgress(s.session.id, s.turn.id, {
      ...w,
      rawArguments: '{"path":"b.txt","con',
      complete: false,
    });
    h.pipeline.onArgumentsProgress(s.session.id, s.turn.id, { ...w, complete: true });
    h.pipeline.onArgumentsProgress(s.session.id, s.turn.id, { ...r, complete: true });
    await settle();
    expect(exec.calls).toHaveLength(0);
    await h.pipeline.dispatch(request(h, s, [w, r]));
    expect(exec.calls.map((c) => c.op)).toEqual(["write_file", "read_file"]);
  });

  it("read-only neighbours with no write before them start early, together, and a read after the write does not", async () => {
    const exec = new ScriptedExecutor((req) => ({
      delayMs: req.op === "read_file" ? 300 : 10,
      result: { ok: true, output: `${req.op} ${JSON.stringify(req.input)}` },
    }));
    const h = setup({ exec, tools: [readTool, shellTool, autoWriter, externalWriter] });
    const s = await newTurn(t.current);
    const [r1, r2, w, r3] = [
      call("read_file", { path: "1" }),
      call("read_file", { path: "2" }),
      call("write_file", { path: "3", content: "x" }),
      call("read_file", { path: "3" }),
    ];
    for (const c of [r1, r2, w, r3]) h.pipeline.onArgumentsProgress(s.session.id, s.turn.id, { ...c, complete: true });
    await waitFor(() => exec.calls.length === 2, "two early reads");
    expect(exec.maxInFlight).toBe(2);
    await settle();
    expect(exec.calls.map((c) => c.input)).toEqual([{ path: "1" }, { path: "2" }]);
    const out = await h.pipeline.dispatch(request(h, s, [r1, r2, w, r3]));
    expect(out.results.map((x) => x.isError)).toEqual([false, false, false, false]);
    // the early runs were used, not run again; the last read came after the write
    expect(exec.calls.map((c) => `${c.op}:${(c.input as { path: string }).path}`)).toEqual([
      "read_file:1",
      "read_file:2",
      "write_file:3",
      "read_file:3",
    ]);
  });

  it("the dispatch discards an early read that a write earlier in its calls made stale", async () => {
    const { exec, h } = make();
    const s = await newTurn(t.current);
    const w = call("write_file", { path: "c.txt", content: "x" });
    const r = call("read_file", { path: "c.txt" });
    // The speculator never heard of the write (say, a provider that announced it late).
    h.pipeline.onArgumentsProgress(s.session.id, s.turn.id, { ...r, complete: true });
    await waitFor(() => exec.calls.length === 1, "early read");
    await h.pipeline.dispatch(request(h, s, [w, r]));
    expect(exec.calls.map((c) => c.op)).toEqual(["read_file", "write_file", "read_file"]);
  });
});
