// The plan stage: creates a call's record and decides its fate, in this order: resolve (name
// and argument ladders, schema) with the truncation gate in strict mode, the loop guard, then
// the decision (org policy, the session's mode, the tool's approval level for this input, the
// session's approvals). A call allowed on writes its row (queued) and tool.started, and goes on
// to approve.ts (a person must answer) or run.ts; a call refused here never runs, and its row,
// events and audit entry say why.
import type { CallRecord, ModelToolCall, TurnState } from "./contract";
import { decide, type Decision } from "../policy/decide";
import { applyMode, modeRefusal } from "../policy/modes";
import { exactFingerprint } from "../policy/fingerprint";
import type { ToolStatus } from "../protocol/events";
import { guardKey } from "./loop-guard";
import { personCopy } from "./person";
import { auditOf, parentOf, safeEmit, type Decided } from "./records";
import { storableJson } from "../db/storable";
import { resolve } from "./resolve";
import { needsPerson, outsideSurface } from "./subagent";

export const TRUNCATED_ARGS =
  "This call was not run: your previous response was cut off at the output limit, so its arguments were incomplete and had to be guessed. " +
  "Send the call again with complete arguments; if it carries a lot of content, split it into smaller calls.";

export function rawInput(raw: string): unknown {
  return { _unparsed: raw.length > 10_000 ? `${raw.slice(0, 10_000)}…` : raw };
}

/** A new record for the model's call in `slot`: nothing is known of it but what the model wrote. */
export function newRecord(turn: TurnState, slot: number, mc: ModelToolCall): CallRecord {
  return { turn, slot, providerCallId: mc.providerCallId, toolCallId: "", name: mc.name, batchable: false };
}

/** Records a call that will not run, with its final result and the audit entry of why (one
 *  transaction), and tells observers. */
export async function refuse(
  call: CallRecord,
  status: ToolStatus,
  content: string,
  input: unknown,
  why?: Decided,
): Promise<CallRecord> {
  const turn = call.turn;
  call.toolCallId = await turn.core.recorder.create(
    {
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
    },
    why && auditOf(call, why),
  );
  await safeEmit(turn, {
    type: "tool.started",
    turnId: turn.turnId ?? "",
    callId: call.toolCallId,
    name: call.name,
    input: storableJson(input),
    summary: call.tool?.summarize(call.input) ?? call.name,
    ...parentOf(turn),
    mode: turn.mode,
  });
  await safeEmit(turn, {
    type: "tool.finished",
    callId: call.toolCallId,
    status,
    ...personCopy(content, true, true),
    isError: true,
    truncated: false,
    durationMs: 0,
  });
  call.result = {
    content,
    isError: true,
    outcome: status === "rejected" || status === "cancelled" ? "neutral" : "failure",
  };
  return call;
}

/** Plans the model's call in `slot`: its record comes back refused (`result` set) or ready to go on. */
export async function plan(turn: TurnState, mc: ModelToolCall, slot: number, strict: boolean): Promise<CallRecord> {
  const core = turn.core;
  const call = newRecord(turn, slot, mc);
  const r = resolve(core.deps, turn.sessionId, mc, strict);
  call.name = r.name;
  if (!r.ok) return refuse(call, "failed", r.error, rawInput(mc.rawArguments));
  call.tool = r.tool;
  call.input = r.input;
  if (turn.parent && !turn.parent.allowed.has(r.name)) {
    return refuse(call, "blocked", outsideSurface(r.name), r.input, {
      decision: "blocked",
      reason: "subagent: the tool is outside the read-only subagent surface",
      by: "subagent",
    });
  }
  if (strict && r.argumentsRepaired) {
    return refuse(call, "blocked", TRUNCATED_ARGS, r.input, {
      decision: "blocked",
      reason: "truncation gate: arguments needed repair in a turn cut at the output limit",
      by: "slot",
    });
  }
  call.fingerprint = exactFingerprint(r.name, r.input);
  const blocked = core.loopGuard.admit(guardKey(turn), turn.turnId, r.name, call.fingerprint);
  if (blocked) {
    return refuse(call, "blocked", blocked, r.input, {
      decision: "blocked",
      reason: "loop guard: same tool and arguments a third time in a row, nothing changed in between",
      by: "loop_guard",
    });
  }
  const decided = decide({ tool: r.tool, input: r.input }, turn.policy, {
    sessionKeys: turn.sessionKeys,
    rejected: turn.rejected,
  });
  // An org deny or a remembered rejection says more than the mode's refusal.
  const refusal = decided.action === "deny" || decided.action === "reject" ? undefined : modeRefusal(turn.mode, r.tool);
  if (refusal) {
    return refuse(call, "blocked", refusal, r.input, {
      decision: "blocked",
      reason: `${turn.mode} mode: ${refusal}`,
      by: "mode",
    });
  }
  const d = applyMode(turn.mode, decided, { tool: r.tool, input: r.input });
  call.decision = d;
  if (d.action === "deny") {
    return refuse(
      call,
      "blocked",
      `${d.reason} This cannot be approved; do not retry it. Tell the person if the task needs it.`,
      r.input,
      { decision: "policy_deny", reason: d.reason, by: "policy" },
    );
  }
  if (d.action === "reject") {
    const msg = d.message ? ` Their message: ${d.message}` : "";
    return refuse(
      call,
      "rejected",
      `The person already rejected this exact call in this session.${msg} Do not send it again as is.`,
      r.input,
      { decision: "rejected", reason: d.reason, by: "session_rejection" },
    );
  }
  if (turn.parent && d.action === "ask") {
    return refuse(call, "blocked", needsPerson(r.name), r.input, {
      decision: "blocked",
      reason: `subagent: ${d.reason} (a subagent cannot ask the person)`,
      by: "subagent",
    });
  }
  const t = r.tool;
  const input = r.input;
  call.batchable =
    d.action === "run" &&
    d.decision !== "approved_session" &&
    t.isReadOnly(input) &&
    t.isConcurrencySafe(input) &&
    !t.capabilities.includes("Interactive");
  call.toolCallId = await core.recorder.create(
    {
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
    },
    runAudit(call, d),
  );
  await safeEmit(turn, {
    type: "tool.started",
    turnId: turn.turnId ?? "",
    callId: call.toolCallId,
    name: r.name,
    input: storableJson(input),
    summary: t.summarize(input),
    ...parentOf(turn),
    mode: turn.mode,
  });
  return call;
}

/** A call that runs on is audited with its row, in one transaction: its decision is on record
 *  before anything of it can run, in one write instead of two. A call that waits for a person
 *  is audited when they answer (approve.ts). */
function runAudit(call: CallRecord, d: Decision) {
  if (d.action !== "run") return undefined;
  const by = d.mode
    ? "mode"
    : d.decision === "auto"
      ? "tool"
      : d.decision === "policy_allow"
        ? "policy"
        : "session_approval";
  return auditOf(call, { decision: d.decision, reason: d.reason, by, extra: { mode: call.turn.mode } });
}
