// The run stage: a planned (and, when it needed one, approved) call is marked running and run —
// its early run taken when speculative.ts started one, otherwise validateInput then execute,
// with the tool's context (remote = the executor the router picks, with the call's abort signal
// and deadline) — and what comes back, sorted into the pipeline's two error kinds plus
// cancellation, goes to finish.ts. Nothing thrown escapes.
import { ExecutorUnavailableError } from "../executors/contract";
import { isFatalError, respond, toToolError } from "../tools/errors";
import type { ChangePreview, Tool, ToolContext, ToolResult, ToolServices } from "../tools/tool";
import type { CallRecord, ExecutorPicker, TurnState } from "./contract";
import { CANCELLED_BEFORE, finish, settle } from "./finish";
import { agentServices } from "./questions";
import { safeEmit } from "./records";
import { storableText } from "../db/storable";
import { servicesFor } from "./resolve";
import { OutputCollector } from "./stream";

export type RunOutcome =
  | { kind: "result"; result: ToolResult }
  | { kind: "invalid"; message: string }
  | { kind: "fatal"; message: string }
  | { kind: "cancelled" };

export interface RunContext {
  sessionId: string;
  callId: string;
  signal: AbortSignal;
  executors: ExecutorPicker;
  services: ToolServices;
  callTimeoutMs: number;
  onProgress(chunk: string): void;
  /** A collector for a streamed output (remote with `stream`); absent: outputs come back as text only. */
  collect?(): OutputCollector;
}

/** Runs the call and settles it. The caller holds the session's lock the call needs. */
export async function runCall(call: CallRecord): Promise<void> {
  const { turn } = call;
  const tool = call.tool!;
  const { signal, dispose } = callSignal(turn);
  try {
    if (signal.aborted) {
      call.early = undefined;
      return await settle(call, { status: "cancelled", content: CANCELLED_BEFORE, isError: true, outcome: "neutral" });
    }
    call.startedAt ??= Date.now();
    await turn.core.recorder.update(call.toolCallId, { status: "running", startedAt: new Date(call.startedAt) });
    await safeEmit(turn, {
      type: "tool.status",
      callId: call.toolCallId,
      status: "running",
      ...standingApproval(call),
    });
    let outcome: RunOutcome;
    if (call.early) {
      outcome = await Promise.race([call.early, aborted(signal)]);
    } else {
      const rc = runContext(call, signal);
      outcome =
        (call.validated ? undefined : await validate(tool, call.input, rc)) ?? (await execute(tool, call.input, rc));
    }
    await finish(call, outcome);
  } catch (e) {
    turn.core.log.error(`tool call ${call.toolCallId} (${call.name}) failed inside the pipeline`, e);
    await settle(call, {
      status: "failed",
      content: `${call.name} failed: ${e instanceof Error ? e.message : String(e)}`,
      isError: true,
      outcome: "failure",
    }).catch(() => undefined);
  } finally {
    dispose();
  }
}

/** An abort signal that fires when the turn or the whole session is cancelled. */
export function callSignal(turn: TurnState): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const sources = [turn.signal, turn.core.sessionSignal(turn.sessionId)];
  const onAbort = () => controller.abort(new Error("cancelled"));
  for (const s of sources) {
    if (s.aborted) onAbort();
    else s.addEventListener("abort", onAbort, { once: true });
  }
  return { signal: controller.signal, dispose: () => sources.forEach((s) => s.removeEventListener("abort", onAbort)) };
}

/** What the call's tool is given to run with: its executors, services, progress and output collector. */
export function runContext(call: CallRecord, signal: AbortSignal): RunContext {
  const { turn } = call;
  const { core } = turn;
  return {
    sessionId: turn.sessionId,
    callId: call.toolCallId,
    signal,
    executors: core.deps.executors,
    services: {
      ...servicesFor(core.deps, core.deps.spills, turn.sessionId),
      ...agentServices(turn, call.toolCallId),
      ...(turn.subagents ? { subagents: turn.subagents } : {}),
    },
    callTimeoutMs: core.limits.callTimeoutMs,
    onProgress: (chunk) =>
      void safeEmit(turn, { type: "tool.progress", callId: call.toolCallId, chunk: storableText(chunk) }),
    collect: () =>
      new OutputCollector({
        spills: core.deps.spills,
        sessionId: turn.sessionId,
        toolCallId: call.toolCallId,
        limits: core.limits.shell,
        log: core.log,
        ceiling: core.limits.outputCeiling,
      }),
  };
}

function aborted(signal: AbortSignal): Promise<RunOutcome> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve({ kind: "cancelled" });
    else signal.addEventListener("abort", () => resolve({ kind: "cancelled" }), { once: true });
  });
}

/** A call that runs on an approval given before (a session approval, a policy allow) says so. */
function standingApproval(call: CallRecord): { approvedBy?: { kind: "session" | "policy"; reason: string } } {
  const d = call.decision;
  if (d?.action !== "run" || d.decision === "auto") return {};
  return { approvedBy: { kind: d.decision === "approved_session" ? "session" : "policy", reason: d.reason } };
}

export function toolContext(tool: Tool, rc: RunContext): ToolContext {
  return {
    sessionId: rc.sessionId,
    callId: rc.callId,
    signal: rc.signal,
    services: rc.services,
    progress: rc.onProgress,
    async remote(input, opts = {}) {
      if (rc.signal.aborted) throw rc.signal.reason ?? new Error("cancelled");
      const executor = rc.executors.pick(tool, input, rc.sessionId);
      if (!executor)
        throw respond(
          `${tool.name} cannot run right now: no runner is connected for this session. Try again once the runner reconnects.`,
        );
      const collector = opts.stream ? rc.collect?.() : undefined;
      try {
        const result = await executor.run({
          sessionId: rc.sessionId,
          callId: rc.callId,
          op: opts.op ?? tool.name,
          input,
          deadline: Date.now() + (opts.timeoutMs ?? rc.callTimeoutMs),
          signal: rc.signal,
          onProgress: opts.onProgress ?? rc.onProgress,
          ...(collector ? { output: { ceiling: collector.ceiling, sink: (b: Uint8Array) => collector.push(b) } } : {}),
        });
        if (!collector) return result;
        if (collector.received === 0 && !result.meta?.stored) {
          await collector.discard();
          return result;
        }
        const stored = result.meta?.stored as
          { from?: number; dropped?: { from: number; to: number; reason: string } } | undefined;
        const from = stored?.from ?? 0;
        const dropped = stored?.dropped && {
          from: stored.dropped.from - from,
          to: stored.dropped.to - from,
          reason: stored.dropped.reason,
        };
        return { ...result, streamed: await collector.finish(dropped) };
      } catch (e) {
        await collector?.discard();
        throw e;
      }
    },
  };
}

/** validateInput alone (before an approval is asked). Undefined when the call may proceed. */
export async function validate(tool: Tool, input: unknown, rc: RunContext): Promise<RunOutcome | undefined> {
  try {
    const problem = await tool.validateInput(input, toolContext(tool, rc));
    return problem ? { kind: "invalid", message: problem } : undefined;
  } catch (e) {
    return classify(e, rc.signal);
  }
}

/** The tool's preview of its change, for an approval card; undefined when it has none. */
export async function preview(tool: Tool, input: unknown, rc: RunContext): Promise<ChangePreview | undefined> {
  try {
    return await tool.preview(input, toolContext(tool, rc));
  } catch {
    // A fatal error is for execute to meet; the card falls back to what the input says.
    return undefined;
  }
}

export async function execute(tool: Tool, input: unknown, rc: RunContext): Promise<RunOutcome> {
  if (rc.signal.aborted) return { kind: "cancelled" };
  try {
    const result = await abortable(tool.execute(input, toolContext(tool, rc)), rc.signal);
    if (rc.signal.aborted) return { kind: "cancelled" };
    if (!result || typeof result.output !== "string") {
      return {
        kind: "result",
        result: { output: `${tool.name} returned no output (a bug in the tool).`, isError: true },
      };
    }
    return { kind: "result", result };
  } catch (e) {
    return classify(e, rc.signal);
  }
}

function classify(e: unknown, signal: AbortSignal): RunOutcome {
  if (signal.aborted) return { kind: "cancelled" };
  if (isFatalError(e)) return { kind: "fatal", message: (e as Error).message };
  if (e instanceof ExecutorUnavailableError) {
    // Only a call that never reached the runner is known not to have run.
    const next = e.started
      ? "It was running; its effects are unknown (it may have partly run): check them (read the files it touches, list the workspace) before retrying."
      : "The call did not run; try again once the runner is back.";
    return { kind: "result", result: { output: `${e.message} ${next}`, isError: true } };
  }
  return { kind: "result", result: { output: toToolError(e).message, isError: true } };
}

// A tool that ignores its signal must not hold the turn after cancel: the call is reported
// cancelled at once (the executor was told through the same signal).
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason ?? new Error("cancelled"));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
