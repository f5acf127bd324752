// Execution and post-processing of one planned call: mark it running, run it (or take its
// early run), cut and spill the output, wrap network results, and record the row and the
// tool.finished event. Loop-guard bookkeeping happens afterwards, in slot order (dispatch.ts).
import type { ToolStatus } from "../protocol/events";
import { safeEmit, type CallState, type Core, type TurnState } from "./core";
import { cutAndSpill, isRunningPoll, storableText, wrapExternal } from "./finalize";
import { execute, validate, type RunContext, type RunOutcome } from "./run";
import { servicesFor } from "./resolve";
import { agentServices } from "./questions";
import { personCopy } from "./person";
import { OutputCollector } from "./stream";

export const CANCELLED_BEFORE = "Cancelled by the person before it ran.";
export const CANCELLED_DURING =
  "Cancelled by the person while it was running; it may have partly run. Check its effects before retrying.";

export function runContext(core: Core, turn: TurnState, call: CallState, signal: AbortSignal): RunContext {
  return {
    sessionId: turn.sessionId,
    callId: call.toolCallId,
    signal,
    executors: core.deps.executors,
    services: {
      ...servicesFor(core.deps, core.deps.spills, turn.sessionId),
      ...agentServices(core, turn, call.toolCallId),
      ...(turn.subagents ? { subagents: turn.subagents } : {}),
    },
    callTimeoutMs: core.limits.callTimeoutMs,
    onProgress: (chunk) =>
      void safeEmit(core, turn, { type: "tool.progress", callId: call.toolCallId, chunk: storableText(chunk) }),
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

/** An abort signal that fires when the turn or the whole session is cancelled. */
export function callSignal(core: Core, turn: TurnState): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const sources = [turn.signal, core.sessionSignal(turn.sessionId)];
  const onAbort = () => controller.abort(new Error("cancelled"));
  for (const s of sources) {
    if (s.aborted) onAbort();
    else s.addEventListener("abort", onAbort, { once: true });
  }
  return { signal: controller.signal, dispose: () => sources.forEach((s) => s.removeEventListener("abort", onAbort)) };
}

export async function runAndFinish(core: Core, turn: TurnState, call: CallState): Promise<void> {
  const tool = call.tool!;
  const { signal, dispose } = callSignal(core, turn);
  try {
    if (signal.aborted) {
      call.early = undefined;
      return await settle(core, turn, call, "cancelled", CANCELLED_BEFORE, true, "neutral");
    }
    call.startedAt ??= Date.now();
    await core.recorder.update(call.toolCallId, { status: "running", startedAt: new Date(call.startedAt) });
    await safeEmit(core, turn, {
      type: "tool.status",
      callId: call.toolCallId,
      status: "running",
      ...standingApproval(call),
    });
    let outcome: RunOutcome;
    if (call.early) {
      outcome = await Promise.race([call.early, aborted(signal)]);
    } else {
      const rc = runContext(core, turn, call, signal);
      outcome =
        (call.validated ? undefined : await validate(tool, call.input, rc)) ?? (await execute(tool, call.input, rc));
    }
    await finishOutcome(core, turn, call, outcome);
  } catch (e) {
    core.log.error(`tool call ${call.toolCallId} (${call.name}) failed inside the pipeline`, e);
    await settle(
      core,
      turn,
      call,
      "failed",
      `${call.name} failed: ${e instanceof Error ? e.message : String(e)}`,
      true,
      "failure",
    ).catch(() => undefined);
  } finally {
    dispose();
  }
}

function aborted(signal: AbortSignal): Promise<RunOutcome> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve({ kind: "cancelled" });
    else signal.addEventListener("abort", () => resolve({ kind: "cancelled" }), { once: true });
  });
}

export async function finishOutcome(core: Core, turn: TurnState, call: CallState, outcome: RunOutcome): Promise<void> {
  switch (outcome.kind) {
    case "cancelled":
      return settle(core, turn, call, "cancelled", CANCELLED_DURING, true, "neutral");
    case "invalid":
      return settle(core, turn, call, "failed", outcome.message, true, "failure");
    case "fatal":
      turn.halt ??= `${call.name}: ${outcome.message}`;
      return settle(core, turn, call, "failed", outcome.message, true, "failure");
    case "result": {
      const r = outcome.result;
      call.running = isRunningPoll(r);
      const fin = await cutAndSpill(r, {
        sessionId: turn.sessionId,
        toolCallId: call.toolCallId,
        spills: core.deps.spills,
        log: core.log,
        limits: core.limits,
      });
      const network = r.network ?? call.tool?.capabilities.includes("Network") ?? false;
      const source =
        typeof r.meta?.url === "string" ? r.meta.url : typeof r.meta?.origin === "string" ? r.meta.origin : undefined;
      // Errors too: a network tool's error output carries the remote's text (a status page, an MCP isError result).
      const content = network ? wrapExternal(fin.content, source) : fin.content;
      const isError = r.isError === true;
      // A command's or a page's own output is shown as it is, even when it failed.
      const written = !network && r.kind !== "shell";
      return settle(
        core,
        turn,
        call,
        isError ? "failed" : "succeeded",
        content,
        isError,
        isError ? "failure" : "success",
        fin.truncated,
        fin.spillRef,
        r.diff,
        written,
      );
    }
  }
}

/** Records a finished call (row + tool.finished) and keeps its model-facing result. */
export async function settle(
  core: Core,
  turn: TurnState,
  call: CallState,
  status: ToolStatus,
  content: string,
  isError: boolean,
  outcome: CallState["outcome"],
  truncated = false,
  spillRef?: string,
  diff?: string,
  written = true,
): Promise<void> {
  call.content = content;
  call.isError = isError;
  call.outcome = outcome;
  const ended = Date.now();
  const durationMs = call.startedAt ? ended - call.startedAt : 0;
  await core.recorder.update(call.toolCallId, {
    status,
    endedAt: new Date(ended),
    result: content,
    isError,
    truncated,
    spillId: spillRef ?? null,
  });
  await safeEmit(core, turn, {
    type: "tool.finished",
    callId: call.toolCallId,
    status,
    ...personCopy(content, isError, written),
    isError,
    truncated,
    ...(spillRef ? { spillRef } : {}),
    durationMs,
    ...(diff !== undefined ? { diff: storableText(diff) } : {}),
  });
}

/** A call that runs on an approval given before (a session approval, a policy allow) says so. */
function standingApproval(call: CallState): { approvedBy?: { kind: "session" | "policy"; reason: string } } {
  const d = call.decision;
  if (d?.action !== "run" || d.decision === "auto") return {};
  return { approvedBy: { kind: d.decision === "approved_session" ? "session" : "policy", reason: d.reason } };
}
