// task (subagents) through the engine and the real pipeline, against the fake provider on both
// wire formats: three subagents run in parallel and their reports come back in call order; each
// one's calls are rows, events and audit entries carrying the task call's id; a subagent's write,
// shell and task calls are refused; its usage is in the turn's; a cancel of the turn ends them;
// the parallel and step limits answer with a clear error. The fake tells a subagent's request
// from the parent's by the subagent system prompt, and subagents apart by their job's marker.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../../testing/db";
import { createEventHub, type EventHub } from "../../hub/events";
import { seedSession } from "../../testing/hub";
import { eventsUntilFinished, fakeProviderEnv, fastRetries } from "../../testing/engine";
import { createEngine, type Engine } from "../../engine/engine";
import { SUBAGENT_SYSTEM_PROMPT, type SubagentLimits } from "../../engine/subagent";
import { startFakeProvider, type FakeProvider, type RecordedRequest } from "../../engine/fake-provider/server";
import type { ScriptStepInput } from "../../engine/fake-provider/script";
import { type Harness, makePipeline, ScriptedExecutor, toolStates, waitFor } from "../../testing/pipeline";
import type { ProviderKind } from "../../engine/types";
import type { SessionEvent } from "../../protocol/events";
import { readFileTool } from "./read_file";
import { shellTool } from "./shell";
import { taskTool } from "./task";
import { writeFileTool } from "./write_file";

/** What the fake needs of a request, on either wire format. */
function view(req: RecordedRequest) {
  const body = req.body as { system?: unknown; messages: { role: string }[] };
  const system =
    req.format === "anthropic"
      ? JSON.stringify(body.system ?? "")
      : JSON.stringify(body.messages.find((m) => m.role === "system") ?? "");
  return {
    sub: system.includes("You are a subagent"),
    /** Responses the conversation already holds. */
    step: body.messages.filter((m) => m.role === "assistant").length,
    job: /JOB-([A-Z])/.exec(req.raw)?.[1],
  };
}

const task = (job: string) => ({
  type: "tool_call" as const,
  name: "task",
  arguments: JSON.stringify({ description: `Look for ${job}`, prompt: `JOB-${job}: find where ${job} is handled.` }),
});
const call = (name: string, args: unknown) => ({ type: "tool_call" as const, name, arguments: JSON.stringify(args) });
const text = (t: string, extra: { delayMs?: number; deltaChars?: number } = {}): ScriptStepInput => ({
  blocks: [{ type: "text" as const, text: t }],
  ...extra,
});

describe.each(testDatabases())("task (subagents) on %s", (dbProvider) => {
  const t = useTestDb(dbProvider);
  let fake: FakeProvider;
  let script: (req: RecordedRequest) => ScriptStepInput | undefined = () => undefined;
  let hub: EventHub;
  let h: Harness;
  let exec: ScriptedExecutor;
  let engine: Engine | undefined;

  beforeAll(async () => {
    fake = await startFakeProvider({ respond: (req) => script(req) });
  });
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.requests.length = 0;
    hub = createEventHub(t.current.db, { url: t.current.url });
    // Reads end together 1.5 s after the first starts: reads that overlap prove the subagents ran at once.
    let until = 0;
    exec = new ScriptedExecutor((req) => {
      if (Date.now() > until) until = Date.now() + 1500;
      return {
        delayMs: until - Date.now(),
        result: { ok: true, output: `contents of ${(req.input as { path?: string }).path}` },
      };
    });
    h = makePipeline(t.current, {
      exec,
      deps: { tools: toolStates([readFileTool, writeFileTool, shellTool, taskTool]) },
    });
  });
  afterEach(async () => {
    await engine?.dispose();
    await hub.dispose();
    await h.close();
  });

  const start = (kind: ProviderKind, subagents?: SubagentLimits) => {
    engine = createEngine({
      db: t.current.db,
      rows: t.current.rows,
      hub,
      dispatcher: h.pipeline,
      env: fakeProviderEnv(kind, fake),
      retry: fastRetries,
      systemPrompt: "SYSTEM",
      catalog: { catalog: (sessionId) => h.deps.tools.forSession(sessionId).entries() },
      subagents,
    });
    return engine;
  };

  describe.each(["anthropic", "openai"] as const)("on the %s wire", (kind) => {
    it("three subagents run in parallel; reports in call order; their calls audited with the task's id; write, shell and task refused; usage summed", async () => {
      script = (req) => {
        const v = view(req);
        if (!v.sub) return v.step === 0 ? { blocks: [task("A"), task("B"), task("C")] } : text("All three reported.");
        if (v.job === "A")
          return v.step === 0
            ? { blocks: [call("read_file", { path: "a.ts" })] }
            : text("Report A: alpha is in a.ts.", { delayMs: 40, deltaChars: 4 });
        if (v.job === "B") {
          return v.step === 0
            ? {
                blocks: [
                  call("read_file", { path: "b.ts" }),
                  call("write_file", { path: "b.ts", content: "x" }),
                  call("shell", { command: "rm -rf src" }),
                  task("D"),
                ],
              }
            : text("Report B: could not change anything.");
        }
        return v.step === 0 ? { blocks: [call("read_file", { path: "c.ts" })] } : text("Report C: gamma.");
      };
      const { sessionId, userId, orgId } = await seedSession(t.current.db);
      const { turnId } = await start(kind).sendMessage(sessionId, { userId }, "explore");
      const events = await eventsUntilFinished(hub, sessionId, turnId);
      expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "completed" });

      // The subagents' requests: their own system prompt, the read-only surface, the job alone.
      const subs = fake.requests.filter((r) => view(r).sub);
      expect(subs).toHaveLength(6);
      const names = (r: RecordedRequest) =>
        ((r.body as { tools?: { name?: string; function?: { name: string } }[] }).tools ?? []).map(
          (x) => x.name ?? x.function?.name,
        );
      expect(names(subs[0])).toEqual(["read_file"]);
      expect(subs[0].raw).toContain(JSON.stringify(SUBAGENT_SYSTEM_PROMPT).slice(1, 40));
      expect(subs[0].raw).not.toContain("explore");
      // The three reads ran at the same time.
      expect(exec.maxInFlight).toBe(3);

      // The parent's second request: one result per task call, in call order, each its subagent's report only.
      const parent = fake.requests.filter((r) => !view(r).sub);
      expect(parent).toHaveLength(2);
      const raw = parent[1].raw;
      const [a, b, c] = ["Report A: alpha is in a.ts.", "Report B: could not change anything.", "Report C: gamma."].map(
        (s) => raw.indexOf(s),
      );
      expect(a).toBeGreaterThan(0);
      expect(b).toBeGreaterThan(a);
      expect(c).toBeGreaterThan(b);
      expect(raw).not.toContain("contents of a.ts");

      const rows = await t.current.db.toolCall.findMany({ where: { sessionId }, orderBy: { createdAt: "asc" } });
      const tasks = rows.filter((r) => r.name === "task" && !r.parentCallId);
      expect(tasks.map((r) => [r.status, r.result])).toEqual([
        ["succeeded", "Report A: alpha is in a.ts."],
        ["succeeded", "Report B: could not change anything."],
        ["succeeded", "Report C: gamma."],
      ]);
      const ofB = rows.filter((r) => r.parentCallId === tasks[1].id);
      expect(ofB.map((r) => [r.name, r.status]).sort()).toEqual([
        ["read_file", "succeeded"],
        ["shell", "blocked"],
        ["task", "blocked"],
        ["write_file", "blocked"],
      ]);
      for (const r of ofB.filter((x) => x.status === "blocked"))
        expect(r.result).toMatch(/not available to a subagent/);
      expect(exec.calls.map((c) => c.op).sort()).toEqual(["read_file", "read_file", "read_file"]);
      const children = rows.filter((r) => r.parentCallId);
      expect(children).toHaveLength(6);

      // Audit: every subagent call's decision names its task call.
      const audit = await t.current.db.auditEvent.findMany({ where: { orgId, sessionId } });
      for (const child of children) {
        const entry = audit.find((e) => e.target === `tool_call:${child.id}`);
        expect(entry, child.name).toBeDefined();
        expect((entry!.detail as { parentCallId?: string }).parentCallId).toBe(child.parentCallId);
      }
      expect(
        audit.filter((e) => e.action === "tool.blocked" && (e.detail as { by?: string }).by === "subagent"),
      ).toHaveLength(3);

      // Events: the subagent's calls carry the task's id; its text streams as the task's progress.
      const started = events.filter(
        (e): e is Extract<SessionEvent, { type: "tool.started" }> => e.type === "tool.started",
      );
      expect(started.filter((e) => e.parentCallId === tasks[0].id).map((e) => e.name)).toEqual(["read_file"]);
      const progressA = events
        .flatMap((e) => (e.type === "tool.progress" && e.callId === tasks[0].id ? [e.chunk] : []))
        .join("");
      expect(progressA).toContain("Report A: alpha is in a.ts.");
      expect(
        events
          .filter((e) => e.type === "text.delta")
          .map((e) => (e as { text: string }).text)
          .join(""),
      ).toBe("All three reported.");

      // Usage: the turn's total is the sum of all eight requests (two of its own, six of the subagents).
      const requests = await t.current.db.modelRequest.findMany({ where: { turnId } });
      expect(requests).toHaveLength(8);
      const turn = await t.current.db.turn.findUniqueOrThrow({ where: { id: turnId } });
      const sum = (k: "inputTokens" | "outputTokens") => requests.reduce((n, r) => n + r[k], 0);
      expect(turn.inputTokens).toBe(sum("inputTokens"));
      expect(turn.outputTokens).toBe(sum("outputTokens"));
      expect(turn.outputTokens).toBeGreaterThan(0);
      const lastUsage = events.filter((e) => e.type === "usage").at(-1) as { usage: { inputTokens: number } };
      expect(lastUsage.usage.inputTokens).toBe(turn.inputTokens);
      // Nothing of the subagents' conversations entered the session's history.
      const history = await t.current.db.message.findMany({ where: { sessionId } });
      expect(JSON.stringify(history.map((m) => m.content))).not.toContain('Report A: alpha is in a.ts."}]');
      expect(history.filter((m) => m.role === "assistant")).toHaveLength(2);
    });

    it("a cancel of the turn cancels its subagents", async () => {
      script = (req) => {
        const v = view(req);
        if (!v.sub) return { blocks: [task("A"), task("B")] };
        // A hangs in its model request, B in its read.
        return v.job === "A"
          ? { blocks: [{ type: "text", text: "Looking around the code base for alpha..." }], hangAfterBytes: 400 }
          : { blocks: [call("read_file", { path: "b.ts" })] };
      };
      exec.setScript(() => ({ delayMs: 60_000, result: { ok: true, output: "late" } }));
      const { sessionId, userId } = await seedSession(t.current.db);
      const e = start(kind);
      const { turnId } = await e.sendMessage(sessionId, { userId }, "explore");
      await waitFor(
        () => exec.calls.length === 1 && fake.requests.filter((r) => view(r).sub).length === 2,
        "both subagents at work",
      );
      await e.cancel(sessionId);
      const events = await eventsUntilFinished(hub, sessionId, turnId);
      expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "cancelled" });
      expect(exec.cancelled).toHaveLength(1);
      await waitFor(() => fake.streaming() === 0, "the hanging stream closed");
      const rows = await t.current.db.toolCall.findMany({ where: { sessionId } });
      expect(rows.filter((r) => r.name === "task").map((r) => r.status)).toEqual(["cancelled", "cancelled"]);
      expect(rows.find((r) => r.name === "read_file")?.status).toBe("cancelled");
      expect(fake.requests).toHaveLength(3);
    });
  });

  it("a subagent makes no further request once the turn's owner is no longer a member, nor does the turn", async () => {
    const { sessionId, userId, orgId } = await seedSession(t.current.db);
    let removed: Promise<unknown> | undefined;
    script = (req) => {
      const v = view(req);
      if (!v.sub) return v.step === 0 ? { blocks: [task("A")] } : text("never");
      // The membership ends while the subagent's first read runs (1.5 s); nobody cancels the turn.
      // (then(): a Prisma query runs only once something waits for it.)
      removed ??= t.current.db.membership.delete({ where: { userId_orgId: { userId, orgId } } }).then(() => true);
      return { blocks: [call("read_file", { path: `A-${v.step}.ts` })] };
    };
    const { turnId } = await start("anthropic").sendMessage(sessionId, { userId }, "explore");
    const events = await eventsUntilFinished(hub, sessionId, turnId);
    await removed;
    const gone = "The turn stopped: the session's owner is no longer a member of this org.";
    const [row] = await t.current.db.toolCall.findMany({ where: { sessionId, name: "task", parentCallId: null } });
    expect(row).toMatchObject({ isError: true, result: gone });
    expect(events.at(-1)).toMatchObject({ type: "turn.finished", status: "cancelled", stopReason: "owner_removed" });
    expect(fake.requests.map((r) => view(r).sub)).toEqual([false, true]);
  });

  it("bounds: more task calls than may run at once, and a subagent past its step limit, answer with a clear error", async () => {
    script = (req) => {
      const v = view(req);
      if (!v.sub) return v.step === 0 ? { blocks: [task("A"), task("B"), task("C")] } : text("ok");
      return { blocks: [call("read_file", { path: `${v.job}-${v.step}.ts` })] };
    };
    const { sessionId, userId } = await seedSession(t.current.db);
    const { turnId } = await start("anthropic", { maxParallel: 2, maxSteps: 2 }).sendMessage(
      sessionId,
      { userId },
      "explore",
    );
    await eventsUntilFinished(hub, sessionId, turnId);
    const tasks = await t.current.db.toolCall.findMany({
      where: { sessionId, name: "task", parentCallId: null },
      orderBy: { slot: "asc" },
    });
    expect(tasks.map((r) => r.isError)).toEqual([true, true, true]);
    // Which of the three finds both places taken depends on which reaches its start last.
    const results = tasks.map((r) => r.result ?? "");
    expect(
      results.filter((r) => /^The subagent stopped after 2 model requests \(its step limit\)/.test(r)),
    ).toHaveLength(2);
    expect(results.filter((r) => /^Not started: at most 2 subagents run at once in a turn/.test(r))).toHaveLength(1);
    expect(fake.requests.filter((r) => view(r).sub)).toHaveLength(4);
  });
});
