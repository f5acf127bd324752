// Plan of one call, in the design's order: resolve (name and argument ladders, schema) with the
// truncation gate in strict mode, the loop guard, then the decision (org policy, the tool's
// approval level for this input, the session's approvals). A call refused here never runs;
// the row, events and audit say why.
import type { ModelToolCall } from "./contract";
import { decide } from "../policy/decide";
import { applyMode, modeRefusal } from "../policy/modes";
import { exactFingerprint } from "../policy/fingerprint";
import type { ToolStatus } from "../protocol/events";
import { guardKey, safeEmit, type CallState, type Core, type TurnState } from "./core";
import { personCopy } from "./person";
import { storableJson } from "./records";
import { resolve } from "./resolve";
import { needsPerson, outsideSurface } from "./subagent";

export const TRUNCATED_ARGS =
  "This call was not run: your previous response was cut off at the output limit, so its arguments were incomplete and had to be guessed. " +
  "Send the call again with complete arguments; if it carries a lot of content, split it into smaller calls.";

export function rawInput(raw: string): unknown {
  return { _unparsed: raw.length > 10_000 ? `${raw.slice(0, 10_000)}…` : raw };
}

/** Records a call that will not run, with its final result, and tells observers. */
export async function refuse(
  core: Core,
  turn: TurnState,
  call: CallState,
  status: ToolStatus,
  content: string,
  input: unknown,
) {
  call.toolCallId = await core.recorder.create({
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    providerCallId: call.providerCallId,
    slot: call.slot,
    name: call.name,
    input,
    status,
    parentCallId: turn.parent?.callId,
    decision:
      call.decision?.decision === "policy_deny"
        ? "policy_deny"
        : status === "blocked"
          ? "blocked"
          : status === "rejected"
            ? "rejected"
            : undefined,
    decisionReason: call.decision?.reason,
    result: content,
    isError: true,
    endedAt: new Date(),
    mode: turn.mode,
  });
  await safeEmit(core, turn, {
    type: "tool.started",
    turnId: turn.turnId ?? "",
    callId: call.toolCallId,
    name: call.name,
    input: storableJson(input),
    summary: call.tool?.summarize(call.input) ?? call.name,
    ...parentOf(turn),
    mode: turn.mode,
  });
  await safeEmit(core, turn, {
    type: "tool.finished",
    callId: call.toolCallId,
    status,
    ...personCopy(content, true, true),
    isError: true,
    truncated: false,
    durationMs: 0,
  });
  call.content = content;
  call.isError = true;
  call.outcome = status === "rejected" || status === "cancelled" ? "neutral" : "failure";
  return call;
}

export async function planCall(
  core: Core,
  turn: TurnState,
  mc: ModelToolCall,
  slot: number,
  strict: boolean,
): Promise<CallState> {
  const call: CallState = { slot, providerCallId: mc.providerCallId, toolCallId: "", name: mc.name, batchable: false };
  const r = resolve(core.deps, turn.sessionId, mc, strict);
  call.name = r.name;
  if (!r.ok) return refuse(core, turn, call, "failed", r.error, rawInput(mc.rawArguments));
  call.tool = r.tool;
  call.input = r.input;
  if (turn.parent && !turn.parent.allowed.has(r.name)) {
    await refuse(core, turn, call, "blocked", outsideSurface(r.name), r.input);
    await audit(
      core,
      turn,
      call,
      "blocked",
      "subagent: the tool is outside the read-only subagent surface",
      "subagent",
    );
    return call;
  }
  if (strict && r.argumentsRepaired) {
    await refuse(core, turn, call, "blocked", TRUNCATED_ARGS, r.input);
    await audit(
      core,
      turn,
      call,
      "blocked",
      "truncation gate: arguments needed repair in a turn cut at the output limit",
      "slot",
    );
    return call;
  }
  call.fingerprint = exactFingerprint(r.name, r.input);
  const blocked = core.loopGuard.admit(guardKey(turn), turn.turnId, r.name, call.fingerprint);
  if (blocked) {
    await refuse(core, turn, call, "blocked", blocked, r.input);
    await audit(
      core,
      turn,
      call,
      "blocked",
      "loop guard: same tool and arguments a third time in a row, nothing changed in between",
      "loop_guard",
    );
    return call;
  }
  const decided = decide({ tool: r.tool, input: r.input }, turn.policy, {
    sessionKeys: turn.sessionKeys,
    rejected: turn.rejected,
  });
  // An org deny or a remembered rejection says more than the mode's refusal.
  const refusal = decided.action === "deny" || decided.action === "reject" ? undefined : modeRefusal(turn.mode, r.tool);
  if (refusal) {
    await refuse(core, turn, call, "blocked", refusal, r.input);
    await audit(core, turn, call, "blocked", `${turn.mode} mode: ${refusal}`, "mode");
    return call;
  }
  const d = applyMode(turn.mode, decided, { tool: r.tool, input: r.input });
  call.decision = d;
  if (d.action === "deny") {
    await refuse(
      core,
      turn,
      call,
      "blocked",
      `${d.reason} This cannot be approved; do not retry it. Tell the person if the task needs it.`,
      r.input,
    );
    await audit(core, turn, call, "policy_deny", d.reason, "policy");
    return call;
  }
  if (d.action === "reject") {
    const msg = d.message ? ` Their message: ${d.message}` : "";
    await refuse(
      core,
      turn,
      call,
      "rejected",
      `The person already rejected this exact call in this session.${msg} Do not send it again as is.`,
      r.input,
    );
    await audit(core, turn, call, "rejected", d.reason, "session_rejection");
    return call;
  }
  if (turn.parent && d.action === "ask") {
    await refuse(core, turn, call, "blocked", needsPerson(r.name), r.input);
    await audit(core, turn, call, "blocked", `subagent: ${d.reason} (a subagent cannot ask the person)`, "subagent");
    return call;
  }
  const t = r.tool;
  const input = r.input;
  call.batchable =
    d.action === "run" &&
    d.decision !== "approved_session" &&
    t.isReadOnly(input) &&
    t.isConcurrencySafe(input) &&
    !t.capabilities.includes("Interactive");
  call.toolCallId = await core.recorder.create({
    sessionId: turn.sessionId,
    turnId: turn.turnId,
    providerCallId: call.providerCallId,
    slot,
    name: r.name,
    input,
    status: "queued",
    decision: d.action === "run" ? d.decision : d.decision === "policy_ask" ? "policy_ask" : undefined,
    decisionReason: d.reason,
    parentCallId: turn.parent?.callId,
    mode: turn.mode,
  });
  await safeEmit(core, turn, {
    type: "tool.started",
    turnId: turn.turnId ?? "",
    callId: call.toolCallId,
    name: r.name,
    input: storableJson(input),
    summary: t.summarize(input),
    ...parentOf(turn),
    mode: turn.mode,
  });
  if (d.action === "run") {
    const by = d.mode
      ? "mode"
      : d.decision === "auto"
        ? "tool"
        : d.decision === "policy_allow"
          ? "policy"
          : "session_approval";
    await audit(core, turn, call, d.decision, d.reason, by, undefined, { mode: turn.mode });
  }
  return call;
}

export async function audit(
  core: Core,
  turn: TurnState,
  call: CallState,
  decision: Parameters<Core["recorder"]["audit"]>[0]["decision"],
  reason: string,
  by: string,
  actorId?: string | null,
  extra?: Record<string, unknown>,
) {
  try {
    await core.recorder.audit({
      orgId: turn.orgId,
      sessionId: turn.sessionId,
      toolCallId: call.toolCallId,
      tool: call.name,
      decision,
      reason,
      by,
      actorId: actorId === undefined ? turn.actorId : actorId,
      extra: {
        turnId: turn.turnId,
        ...parentOf(turn),
        ...(turn.policy.ok ? { policyVersion: turn.policy.version } : { policyError: turn.policy.error }),
        ...extra,
      },
    });
  } catch (e) {
    core.log.error(`audit of ${decision} for tool call ${call.toolCallId} failed`, e);
  }
}

/** A subagent's call names the task call it runs under (its row, events and audit entries). */
function parentOf(turn: TurnState): { parentCallId?: string } {
  return turn.parent ? { parentCallId: turn.parent.callId } : {};
}
