// The pipeline's writes: ToolCall rows (status, decision, timings, truncated result, spill ref),
// an AuditEvent for every decision, saying who decided and why, and the session's events, whose
// failure is logged and never fails the call.
import type { Db } from "../db";
import type { SessionEventBody, ToolStatus } from "../protocol/events";
import type { DecisionKind } from "../policy/decide";
import type { CallRecord, TurnState } from "./contract";

export interface AuditEntry {
  orgId: string | null;
  sessionId: string;
  toolCallId: string;
  tool: string;
  decision: DecisionKind | "approval_requested" | "cancelled";
  reason: string;
  /** The person who decided, or on whose behalf an automatic decision was made. */
  actorId: string | null;
  /** policy | tool | session_approval | person | loop_guard | slot */
  by: string;
  extra?: Record<string, unknown>;
}

// PostgreSQL text and jsonb cannot hold NUL; the model gets a visible stand-in, the spill the byte.
export function storableText(text: string): string {
  return text.includes("\0") ? text.replace(/\0/g, "\u2400") : text;
}

// Deep copy with NUL stripped from strings: PostgreSQL jsonb rejects \u0000.
export function storableJson(value: unknown): unknown {
  if (typeof value === "string") return storableText(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[storableText(k)] = storableJson(v);
    return out;
  }
  return value ?? null;
}

export class Recorder {
  constructor(private db: Db) {}

  async create(data: {
    sessionId: string;
    turnId: string | null;
    providerCallId: string;
    slot: number;
    name: string;
    input: unknown;
    status: ToolStatus;
    decision?: DecisionKind;
    decisionReason?: string;
    result?: string;
    isError?: boolean;
    endedAt?: Date;
    /** The session's mode the call was judged in (policy/modes.ts). */
    mode?: string;
    /** A subagent's call: the task call it runs under. */
    parentCallId?: string;
  }): Promise<string> {
    const row = await this.db.toolCall.create({
      data: { ...data, input: storableJson(data.input) as object, decisionReason: data.decisionReason?.slice(0, 2000) },
      select: { id: true },
    });
    return row.id;
  }

  async update(
    id: string,
    data: Partial<{
      status: ToolStatus;
      decision: DecisionKind;
      decisionReason: string;
      startedAt: Date;
      endedAt: Date;
      result: string;
      isError: boolean;
      truncated: boolean;
      spillId: string | null;
    }>,
  ): Promise<void> {
    await this.db.toolCall.update({ where: { id }, data });
  }

  async audit(e: AuditEntry): Promise<void> {
    await this.db.auditEvent.create({
      data: {
        orgId: e.orgId,
        sessionId: e.sessionId,
        actorId: e.actorId,
        action: `tool.${e.decision}`,
        target: `tool_call:${e.toolCallId}`,
        detail: storableJson({ tool: e.tool, decision: e.decision, reason: e.reason, by: e.by, ...e.extra }) as object,
      },
    });
  }
}

/** Emits an event of the call's turn; a failure is logged, never thrown. */
export function safeEmit(turn: TurnState, event: SessionEventBody): Promise<void> {
  return turn.emit(event).catch((e) => turn.core.log.warn(`event ${event.type} could not be emitted`, e));
}

/** Audits a decision about the call; `actorId` defaults to the turn's actor. Never throws. */
export async function audit(
  call: CallRecord,
  decision: AuditEntry["decision"],
  reason: string,
  by: string,
  actorId?: string | null,
  extra?: Record<string, unknown>,
): Promise<void> {
  const turn = call.turn;
  try {
    await turn.core.recorder.audit({
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
    turn.core.log.error(`audit of ${decision} for tool call ${call.toolCallId} failed`, e);
  }
}

/** A subagent's call names the task call it runs under (its row, events and audit entries). */
export function parentOf(turn: Pick<TurnState, "parent">): { parentCallId?: string } {
  return turn.parent ? { parentCallId: turn.parent.callId } : {};
}
