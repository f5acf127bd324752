// A tool call's rows on the pipeline's hot path (pipeline/records.ts): the call's ToolCall row
// with its decision's AuditEvent in one transaction, and the row's updates as the call runs and
// ends. Through the driver for the reason index.ts gives: a call went through five Prisma
// queries on its way to the runner and back, each a millisecond or more of WebAssembly
// compiling, which was most of what the pipeline added to a call. Rows as Prisma writes them:
// ids from row-id.ts, dates as ISO text with +00:00 on SQLite and timestamp(3) UTC on
// PostgreSQL, Json as text / jsonb, booleans as 0/1 / boolean. A dispatch's reads before its
// first call (session, org, policy, approvals) are one read here for the same reason.

import { rowId } from "../row-id";

export interface NewCall {
  sessionId: string;
  turnId: string | null;
  providerCallId: string;
  slot: number;
  name: string;
  /** Already storable (no NUL): records.ts storableJson. */
  input: unknown;
  status: string;
  decision?: string;
  decisionReason?: string;
  mode?: string;
  parentCallId?: string;
  result?: string;
  isError?: boolean;
  endedAt?: Date;
}

/** An audit entry of the call; its target (`tool_call:<id>`) is the new row's. */
export interface CallAudit {
  orgId: string | null;
  sessionId: string;
  actorId: string | null;
  action: string;
  detail: unknown;
}

export interface CallPatch {
  status?: string;
  decision?: string;
  decisionReason?: string;
  startedAt?: Date;
  endedAt?: Date;
  result?: string;
  isError?: boolean;
  truncated?: boolean;
  spillId?: string | null;
}

/** What a dispatch judges its calls by, read in one go (rows as stored; their readers interpret
 *  them: services/policies.ts policyOf, session-modes.ts settleMode, approve.ts approvalStateOf). */
export interface DispatchRows {
  orgId: string;
  mode: string;
  /** Org.forbiddenModes as the driver reads it (parsed, or JSON text on SQLite): parseForbidden. */
  forbiddenModes: unknown;
  /** The org's policy in force (its highest version), if it ever had one; `rules` parsed JSON. */
  policy: { version: number; rules: unknown } | null;
  /** The session's standing approvals and remembered rejections. */
  approvals: { status: string; fingerprint: string; exactFingerprint: string; message: string | null }[];
  /** Whether calls of this response are stored already (a turn resumed after a restart). */
  stored: boolean;
}

export interface CallRows {
  /** Undefined when the session does not exist. */
  dispatchRows(
    sessionId: string,
    turnId: string | null,
    parentCallId: string | null,
  ): Promise<DispatchRows | undefined>;
  /** One transaction: the call's row and, when given, the audit entry of its decision. Returns
   *  the row's id; a row that cannot be stored (its session gone) leaves no audit entry either. */
  addCall(call: NewCall, audit?: CallAudit): Promise<string>;
  /** Throws when no such row is left (its session was deleted meanwhile). */
  updateCall(id: string, patch: CallPatch): Promise<void>;
  addAudit(toolCallId: string, audit: CallAudit): Promise<void>;
}

/** The patch's columns in a fixed order, so each set of columns has one statement. */
export const PATCH_COLUMNS = [
  "status",
  "decision",
  "decisionReason",
  "startedAt",
  "endedAt",
  "result",
  "isError",
  "truncated",
  "spillId",
] as const satisfies readonly (keyof CallPatch)[];

export const callTarget = (id: string) => `tool_call:${id}`;

/** The new row's values in the order of its INSERT's columns (calls-sqlite.ts, calls-postgres.ts),
 *  with each provider's own forms of a date and a boolean. */
export function callValues(
  id: string,
  c: NewCall,
  at: string,
  date: (d: Date) => string,
  bool: (b: boolean) => unknown,
): unknown[] {
  return [
    id,
    c.sessionId,
    c.turnId,
    c.providerCallId,
    c.slot,
    c.name,
    JSON.stringify(c.input),
    c.status,
    c.decision ?? null,
    c.decisionReason ?? null,
    c.mode ?? null,
    c.parentCallId ?? null,
    c.result ?? null,
    bool(c.isError ?? false),
    c.endedAt ? date(c.endedAt) : null,
    at,
  ];
}

/** A new audit entry's values in the order of its INSERT's columns, less `createdAt`. */
export const auditValues = (toolCallId: string, a: CallAudit): unknown[] => [
  rowId(),
  a.orgId,
  a.sessionId,
  a.actorId,
  a.action,
  callTarget(toolCallId),
  JSON.stringify(a.detail),
];

export class NoCallRow extends Error {
  constructor(id: string) {
    super(`Tool call ${id} has no row any more (its session was deleted).`);
    this.name = "NoCallRow";
  }
}
