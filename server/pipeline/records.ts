// The pipeline's writes: ToolCall rows (status, decision, timings, truncated result, spill ref)
// and an AuditEvent for every decision, saying who decided and why.
import type { Db } from "../db";
import type { ToolStatus } from "../protocol/events";
import type { DecisionKind } from "../policy/decide";
import { storableText } from "./finalize";

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
