// The pipeline's writes: ToolCall rows (status, decision, timings, truncated result, spill ref),
// an AuditEvent for every decision, saying who decided and why, and the session's events, whose
// failure is logged and never fails the call.
import type { CallAudit, CallPatch, CallRows, NewCall } from "../db/turn-rows/calls";
import type { SessionEventBody, ToolStatus } from "../protocol/events";
import type { DecisionKind } from "../policy/decide";
import type { CallRecord, TurnState } from "./contract";
import { storableJson } from "../db/storable";

/** A decision about a call, as its audit entry records it. */
export interface Decided {
  decision: DecisionKind | "approval_requested" | "cancelled";
  reason: string;
  /** policy | tool | session_approval | person | loop_guard | slot | mode | subagent */
  by: string;
  /** The person who decided, or on whose behalf an automatic decision was made; default: the turn's actor. */
  actorId?: string | null;
  extra?: Record<string, unknown>;
}

/** The call's row and audit entries, through the turn rows' driver path (db/turn-rows/calls.ts). */
export class Recorder {
  constructor(private rows: CallRows) {}

  /** The row, and with `audit` the decision's entry in the same transaction. Returns the row's id. */
  create(
    data: Omit<NewCall, "status" | "decision"> & { status: ToolStatus; decision?: DecisionKind },
    audit?: CallAudit,
  ): Promise<string> {
    return this.rows.addCall(
      { ...data, input: storableJson(data.input), decisionReason: data.decisionReason?.slice(0, 2000) },
      audit,
    );
  }

  update(id: string, patch: CallPatch & { status?: ToolStatus; decision?: DecisionKind }): Promise<void> {
    return this.rows.updateCall(id, patch);
  }

  audit(toolCallId: string, entry: CallAudit): Promise<void> {
    return this.rows.addAudit(toolCallId, entry);
  }
}

/** Emits an event of the call's turn; a failure is logged, never thrown. */
export function safeEmit(turn: TurnState, event: SessionEventBody): Promise<void> {
  return turn.emit(event).catch((e) => turn.core.log.warn(`event ${event.type} could not be emitted`, e));
}

/** The audit entry of a decision about the call, in the turn it was made in. */
export function auditOf(call: CallRecord, d: Decided): CallAudit {
  const turn = call.turn;
  return {
    orgId: turn.orgId,
    sessionId: turn.sessionId,
    actorId: d.actorId === undefined ? turn.actorId : d.actorId,
    action: `tool.${d.decision}`,
    detail: storableJson({
      tool: call.name,
      decision: d.decision,
      reason: d.reason,
      by: d.by,
      turnId: turn.turnId,
      ...parentOf(turn),
      ...(turn.policy.ok ? { policyVersion: turn.policy.version } : { policyError: turn.policy.error }),
      ...d.extra,
    }),
  };
}

/** Audits a decision about a call that has its row; `actorId` defaults to the turn's actor. Never throws. */
export async function audit(
  call: CallRecord,
  decision: Decided["decision"],
  reason: string,
  by: string,
  actorId?: string | null,
  extra?: Record<string, unknown>,
): Promise<void> {
  try {
    await call.turn.core.recorder.audit(call.toolCallId, auditOf(call, { decision, reason, by, actorId, extra }));
  } catch (e) {
    call.turn.core.log.error(`audit of ${decision} for tool call ${call.toolCallId} failed`, e);
  }
}

/** A subagent's call names the task call it runs under (its row, events and audit entries). */
export function parentOf(turn: Pick<TurnState, "parent">): { parentCallId?: string } {
  return turn.parent ? { parentCallId: turn.parent.callId } : {};
}
