// Calls that outlive a server process. The choice, documented here once:
// - A turn the server stopped in (kill -9, a crash) is recovered as interrupted, and no model
//   continues it: its pending cards are cancelled and its running calls reported as "may have
//   partly run" then (interrupted.ts), so an answer can never run a call whose result nobody sees.
// - A pending approval of a turn that still runs (a peer instance's) stays answerable.
// - If the engine resumes the turn it re-dispatches the same calls (same turnId and
//   providerCallIds). Settled calls return their stored result without running again; a call
//   still waiting re-attaches to its Approval row (no second card).
// - If the card is answered while no turn waits, the pipeline settles the call itself: approved
//   → runs once, rejected → recorded; the result is stored on the ToolCall row and onSettled
//   tells the engine, which backfills it when the turn resumes.
// - Either way execution is claimed through Approval.consumedAt, so it happens at most once.
// - At start-up, calls that were running or queued in turns no longer running are failed with
//   a message saying they were interrupted (they may have partly run).
import type { Prisma } from "../db/generated/sqlite/client";
import { decide } from "../policy/decide";
import { keysOfFingerprint } from "../policy/fingerprint";
import { actOnAnswer, approvalStateOf, awaitAnswer } from "./approve";
import type { Answer, CallRecord, Core, TurnState } from "./contract";
import { settle } from "./finish";
import { safeEmit } from "./records";
import { toolByName } from "./resolve";
import { callSignal } from "./run";
import { INTERRUPTED_RUNNING, NOT_STARTED_AT_RESTART } from "./interrupted";
import { settleMode } from "../services/session-modes";
import { policyOf } from "../services/policies";

const TERMINAL = new Set(["succeeded", "failed", "rejected", "cancelled", "blocked"]);

type StoredCall = Prisma.ToolCallGetPayload<{ include: { approval: true } }>;

function answerOf(row: {
  status: string;
  scope: string | null;
  decidedById: string | null;
  message: string | null;
}): Answer | undefined {
  if (row.status === "approved")
    return {
      decision: row.scope === "session" ? "approved_session" : "approved_once",
      by: row.decidedById ?? undefined,
    };
  if (row.status === "rejected")
    return { decision: "rejected", by: row.decidedById ?? undefined, message: row.message ?? undefined };
  if (row.status === "cancelled") return { decision: "cancelled" };
  return undefined;
}

/** The record of a call read back from its row, as plan left it: the row's id, name and input. */
function storedRecord(turn: TurnState, row: StoredCall | Omit<StoredCall, "approval">, slot: number): CallRecord {
  return {
    turn,
    slot,
    providerCallId: row.providerCallId,
    toolCallId: row.id,
    name: row.name,
    batchable: false,
    input: row.input,
  };
}

/** A call of this turn that a previous dispatch (maybe a previous process) already recorded. */
export async function resumeCall(turn: TurnState, row: StoredCall, slot: number): Promise<CallRecord> {
  const call = storedRecord(turn, row, slot);
  if (TERMINAL.has(row.status)) {
    const content = row.result ?? `${row.name} ended (${row.status}) without a stored result.`;
    call.result = { content, isError: row.isError, outcome: "neutral" };
    return call;
  }
  const approval = row.approval;
  if (row.status !== "awaiting_approval" || !approval) {
    await settle(call, { status: "failed", content: INTERRUPTED_RUNNING, isError: true, outcome: "neutral" });
    return call;
  }
  const { signal, dispose } = callSignal(turn);
  try {
    await attach(call, approval, signal, () => awaitAnswer(call, signal));
  } finally {
    dispose();
  }
  return call;
}

// Common to re-attached and orphaned calls: the tool must still exist and policy must still
// not deny it (an org deny added meanwhile wins over an old approval).
async function attach(
  call: CallRecord,
  approval: NonNullable<StoredCall["approval"]>,
  signal: AbortSignal,
  then: () => Promise<void>,
): Promise<void> {
  const { turn } = call;
  const { core } = turn;
  const tool = toolByName(core.deps, turn.sessionId, call.name);
  if (!tool) {
    await core.broker.cancel(approval.id);
    return settle(call, {
      status: "failed",
      content: `${call.name} is no longer available in this session; the call did not run.`,
      isError: true,
      outcome: "neutral",
    });
  }
  call.tool = tool;
  call.fingerprint = approval.exactFingerprint;
  call.validated = true;
  const d = decide({ tool, input: call.input }, turn.policy, { sessionKeys: new Set(), rejected: new Map() });
  if (d.action === "deny") {
    await core.broker.cancel(approval.id);
    await safeEmit(turn, {
      type: "approval.resolved",
      approvalId: approval.id,
      callId: call.toolCallId,
      decision: "cancelled",
    });
    await core.recorder.update(call.toolCallId, { decision: "policy_deny", decisionReason: d.reason });
    return settle(call, {
      status: "blocked",
      content: `${d.reason} This cannot be approved; do not retry it.`,
      isError: true,
      outcome: "failure",
    });
  }
  if (signal.aborted)
    return settle(call, {
      status: "cancelled",
      content: "Cancelled before it ran.",
      isError: true,
      outcome: "neutral",
    });
  call.approval = { id: approval.id, keys: keysOfFingerprint(approval.fingerprint) };
  await then();
}

export async function turnFor(
  core: Core,
  sessionId: string,
  turnId: string | null,
  actorId: string | null,
  signal: AbortSignal,
): Promise<TurnState | undefined> {
  return (await openTurn(core, sessionId, turnId, actorId, signal, null))?.turn;
}

/** The turn's state for a dispatch (of the turn's own calls, or a subagent's under `parentCallId`),
 *  and whether calls of it are stored already. One read of the rows its calls are judged by
 *  (db/turn-rows/calls.ts): a call waits for it before it can start. */
export async function openTurn(
  core: Core,
  sessionId: string,
  turnId: string | null,
  actorId: string | null,
  signal: AbortSignal,
  parentCallId: string | null,
): Promise<{ turn: TurnState; stored: boolean } | undefined> {
  const rows = await core.deps.rows.dispatchRows(sessionId, turnId, parentCallId);
  if (!rows) return undefined;
  const emit = core.deps.emit;
  const tell = async (id: string, e: Parameters<NonNullable<typeof emit>>[1]) => {
    await emit?.(id, e);
  };
  const { mode } = await settleMode(core.deps.db, sessionId, rows, tell);
  const approvals = approvalStateOf(rows.approvals);
  const turn: TurnState = {
    core,
    sessionId,
    turnId,
    actorId,
    orgId: rows.orgId,
    policy: policyOf(rows.policy),
    mode,
    sessionKeys: new Set(approvals.sessionKeys),
    rejected: new Map(approvals.rejected),
    signal,
    emit: async (e) => {
      if (emit) await emit(sessionId, e);
    },
  };
  return { turn, stored: rows.stored };
}

/**
 * The org's policy and the session's mode read again, for a dispatch that waited (a card open, a
 * call that ran alone): an admin's new deny rule or a newly forbidden mode, and the person's
 * switch out of Auto, hold from the next call of the same response, not the next response.
 */
export async function refreshTurn(turn: TurnState): Promise<void> {
  const { core } = turn;
  const rows = await core.deps.rows.dispatchRows(turn.sessionId, turn.turnId, turn.parent?.callId ?? null);
  if (!rows) return;
  turn.policy = policyOf(rows.policy);
  turn.mode = (
    await settleMode(core.deps.db, turn.sessionId, rows, (id, e) => core.deps.emit?.(id, e) ?? Promise.resolve())
  ).mode;
}

/** An approval answered while no turn waits for it: run it once or record the rejection. */
export async function settleOrphan(core: Core, approvalId: string): Promise<void> {
  const approval = await core.deps.db.approval.findUnique({ where: { id: approvalId }, include: { toolCall: true } });
  if (!approval || approval.toolCall.status !== "awaiting_approval") return;
  const answer = answerOf(approval);
  if (!answer) return;
  const row = approval.toolCall;
  const signal = core.sessionSignal(row.sessionId);
  const turn = await turnFor(core, row.sessionId, row.turnId, approval.decidedById, signal);
  if (!turn) return;
  const call = storedRecord(turn, row, row.slot);
  await attach(call, approval, signal, () => actOnAnswer(call, answer, signal));
  core.deps.onSettled?.({ sessionId: row.sessionId, turnId: row.turnId, toolCallId: row.id });
}

/** Start-up: fail calls cut off mid-run, and settle approvals answered just before the stop. */
export async function recover(core: Core): Promise<{ interrupted: number; settled: number }> {
  const db = core.deps.db;
  const orphan = { OR: [{ turnId: null }, { turn: { status: { not: "running" } } }] };
  // One still queued (never started) did not run; one that started may have partly run.
  const notStarted = await db.toolCall.updateMany({
    where: { ...orphan, status: "queued", startedAt: null },
    data: { status: "failed", isError: true, result: NOT_STARTED_AT_RESTART, endedAt: new Date() },
  });
  const cut = await db.toolCall.updateMany({
    where: { ...orphan, status: { in: ["running", "queued"] } },
    data: { status: "failed", isError: true, result: INTERRUPTED_RUNNING, endedAt: new Date() },
  });
  const r = { count: notStarted.count + cut.count };
  const answered = await db.approval.findMany({
    where: {
      status: "approved",
      consumedAt: null,
      toolCall: { status: "awaiting_approval", OR: [{ turnId: null }, { turn: { status: { not: "running" } } }] },
    },
    select: { id: true },
  });
  for (const a of answered) {
    try {
      await settleOrphan(core, a.id);
    } catch (e) {
      core.log.error(`approval ${a.id} could not be settled at start-up`, e);
    }
  }
  return { interrupted: r.count, settled: answered.length };
}
