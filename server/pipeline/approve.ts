// The approval stage, for a call that needs a person. Validate and preview first (a card never
// asks about a call that cannot run, and shows a change as the file's real diff), open the
// Approval row bound to these exact arguments, show the card, wait (cancel wins), then record the
// answer and run the call at most once.
// The row is the truth (it survives a restart and is shared by server instances): the broker
// keeps a waiter per live turn, woken in-process at once and otherwise by a slow poll. Execution
// is claimed by setting consumedAt on an approved row, so an approved call runs at most once
// whoever runs it. ask_user's questions (questions.ts) wait on rows of their own kind here too.
import type { Db } from "../db";
import type { ApprovalDecision, ApprovalRequest } from "../protocol/events";
import { callFacts, decide, type SessionApprovalState } from "../policy/decide";
import { keysOfFingerprint, sessionFingerprint, sessionKeys } from "../policy/fingerprint";
import { approvalCard, cardChange } from "./card";
import { keepWholeChange } from "./card-change";
import { ApprovalError, type Answer, type CallRecord, type Choice } from "./contract";
import { CANCELLED_BEFORE, finish, settle } from "./finish";
import { audit, safeEmit } from "./records";
import { refreshTurn } from "./resume";
import { callSignal, preview, runCall, runContext, validate } from "./run";

export const INTERRUPTED =
  "Not run yet: the server restarted while this call waited for approval. The approval card stays open; once it is answered the call runs (at most once) and its result is stored.";

/** Asks for the call's approval, waits for the answer, and runs the call if it is approved. */
export async function approve(call: CallRecord): Promise<void> {
  const { turn } = call;
  const { core } = turn;
  const tool = call.tool!;
  const input = call.input;
  const { signal, dispose } = callSignal(turn);
  try {
    const rc = runContext(call, signal);
    const invalid = await validate(tool, input, rc);
    if (invalid) return await finish(call, invalid);
    const change = await preview(tool, input, rc);
    if (change && "problem" in change) return await finish(call, { kind: "invalid", message: change.problem });
    call.validated = true;
    const reason = call.decision?.reason ?? "This call needs approval.";
    const kept = await keepWholeChange(cardChange(tool, input, change?.diff), {
      sessionId: turn.sessionId,
      toolCallId: call.toolCallId,
      spills: core.deps.spills,
      log: core.log,
    });
    const card = approvalCard(tool, input, reason, {
      diff: change?.diff,
      unchecked: call.decision?.action === "ask" ? call.decision.unchecked : undefined,
      note: [change?.note, kept.note].filter(Boolean).join("\n") || undefined,
      diffRef: kept.diffRef,
    });
    const keys = sessionKeys(callFacts({ tool, input }));
    const approval = await core.broker.open({
      sessionId: turn.sessionId,
      toolCallId: call.toolCallId,
      fingerprint: sessionFingerprint(keys),
      exactFingerprint: call.fingerprint!,
      request: card,
      reason,
    });
    call.approval = { id: approval.id, keys };
    await core.recorder.update(call.toolCallId, { status: "awaiting_approval" });
    await safeEmit(turn, { type: "tool.status", callId: call.toolCallId, status: "awaiting_approval" });
    await safeEmit(turn, {
      type: "approval.required",
      approvalId: approval.id,
      callId: call.toolCallId,
      request: card,
    });
    await audit(
      call,
      "approval_requested",
      reason,
      call.decision?.decision === "policy_ask" ? "policy" : "tool",
      undefined,
      { approvalId: approval.id },
    );
    await awaitAnswer(call, signal);
  } finally {
    if (call.approval) core.broker.release(call.approval.id);
    dispose();
  }
}

/** Waits for the answer to the call's open card and acts on it. Shared with re-attached calls. */
export async function awaitAnswer(call: CallRecord, signal: AbortSignal): Promise<void> {
  const answer = await call.turn.core.broker.wait(call.approval!.id, signal);
  if (answer.interrupted) {
    call.result = { content: INTERRUPTED, isError: true, outcome: "neutral" };
    return;
  }
  await actOnAnswer(call, answer, signal);
}

/** Acts on the answer to the call's card: records it, then runs the call once if approved. */
export async function actOnAnswer(
  call: CallRecord,
  answer: { decision: string; by?: string; message?: string },
  signal: AbortSignal,
): Promise<void> {
  const { turn } = call;
  const { core } = turn;
  const { id: approvalId, keys } = call.approval!;
  // Cancel wins over an approval that raced it.
  const decision = signal.aborted ? "cancelled" : answer.decision;
  await safeEmit(turn, {
    type: "approval.resolved",
    approvalId,
    callId: call.toolCallId,
    decision: decision as "approved_once" | "approved_session" | "rejected" | "cancelled",
    ...(answer.by ? { by: answer.by } : {}),
    ...(answer.message ? { message: answer.message } : {}),
  });
  if (decision === "cancelled") {
    await audit(call, "cancelled", "cancelled while waiting for approval", "person");
    return settle(call, { status: "cancelled", content: CANCELLED_BEFORE, isError: true, outcome: "neutral" });
  }
  const by = answer.by ?? null;
  if (decision === "rejected") {
    turn.rejected.set(call.fingerprint!, answer.message);
    await core.recorder.update(call.toolCallId, {
      decision: "rejected",
      decisionReason: answer.message ?? "rejected by the person",
    });
    await audit(call, "rejected", answer.message ?? "rejected by the person", "person", by, { approvalId });
    const msg = answer.message ? ` Their message: ${answer.message}` : "";
    return settle(call, {
      status: "rejected",
      content: `The person rejected this call; it did not run.${msg} Do not send it again as is.`,
      isError: true,
      outcome: "neutral",
    });
  }
  // The card may have been open for long: an org deny added meanwhile wins over the approval.
  await refreshTurn(turn);
  const now = decide({ tool: call.tool!, input: call.input }, turn.policy, {
    sessionKeys: new Set(),
    rejected: new Map(),
  });
  if (now.action === "deny") {
    await core.recorder.update(call.toolCallId, { decision: "policy_deny", decisionReason: now.reason });
    await audit(call, "policy_deny", `${now.reason} (added while the card was open)`, "policy", by, { approvalId });
    return settle(call, {
      status: "blocked",
      content: `${now.reason} The org's policy changed while the card was open, so the approved call did not run; do not retry it.`,
      isError: true,
      outcome: "failure",
    });
  }
  const kind = decision === "approved_session" ? "approved_session" : "approved_once";
  if (kind === "approved_session") for (const k of keys) turn.sessionKeys.add(k);
  await core.recorder.update(call.toolCallId, { decision: kind, decisionReason: `approved by ${by ?? "a person"}` });
  await audit(
    call,
    kind,
    kind === "approved_session" ? `approved for the session (covers ${keys.join(", ")})` : "approved once",
    "person",
    by,
    { approvalId },
  );
  if (!(await core.broker.claim(approvalId))) {
    // Another process holds the claim and writes the row; only the model's copy is ours.
    call.result = {
      content: "This approved call was already run (or is running) elsewhere; it was not run a second time.",
      isError: true,
      outcome: "neutral",
    };
    return;
  }
  await core.locks.hold(turn.sessionId, true, () => runCall(call));
}

// --- The broker: Approval rows and their waiters -----------------------------------------

const POLL_MS = 2000;

function toAnswer(row: {
  status: string;
  scope: string | null;
  decidedById: string | null;
  message: string | null;
}): Answer | undefined {
  if (row.status === "pending") return undefined;
  const decision: ApprovalDecision =
    row.status === "approved"
      ? row.scope === "session"
        ? "approved_session"
        : "approved_once"
      : row.status === "rejected"
        ? "rejected"
        : "cancelled";
  return { decision, by: row.decidedById ?? undefined, message: row.message ?? undefined };
}

/** The session's standing approvals and remembered rejections, from their rows. */
export function approvalStateOf(
  rows: { status: string; fingerprint: string; exactFingerprint: string; message: string | null }[],
): SessionApprovalState {
  const sessionKeys = new Set<string>();
  const rejected = new Map<string, string | undefined>();
  for (const r of rows) {
    if (r.status === "approved") for (const k of keysOfFingerprint(r.fingerprint)) sessionKeys.add(k);
    else rejected.set(r.exactFingerprint, r.message ?? undefined);
  }
  return { sessionKeys, rejected };
}

export class ApprovalBroker {
  private waiters = new Map<string, (a: Answer) => void>();
  /** Cards opened by a live turn of this process that has not finished waiting for them. */
  private owned = new Set<string>();
  private closed = false;

  constructor(
    private db: Db,
    private pollMs = POLL_MS,
  ) {}

  /** Session approvals and remembered rejections, read from the rows (shared across restarts). */
  async sessionState(sessionId: string): Promise<SessionApprovalState> {
    return approvalStateOf(
      await this.db.approval.findMany({
        where: { sessionId, OR: [{ status: "approved", scope: "session" }, { status: "rejected" }] },
        select: { status: true, fingerprint: true, exactFingerprint: true, message: true },
      }),
    );
  }

  /** Opens the card. The live turn that opens it owns it from here, before it starts waiting. */
  async open(input: {
    sessionId: string;
    toolCallId: string;
    fingerprint: string;
    exactFingerprint: string;
    request: ApprovalRequest;
    reason: string;
  }) {
    const row = await this.db.approval.create({
      data: { ...input, request: input.request as object, status: "pending" },
    });
    this.owned.add(row.id);
    return row;
  }

  /** Resolves with the answer, or "cancelled" as soon as `signal` aborts (cancel wins). */
  wait(approvalId: string, signal: AbortSignal): Promise<Answer> {
    return new Promise<Answer>((resolve) => {
      let done = false;
      const finish = (a: Answer) => {
        if (done) return;
        done = true;
        this.waiters.delete(approvalId);
        this.owned.delete(approvalId);
        clearInterval(timer);
        signal.removeEventListener("abort", onAbort);
        resolve(a);
      };
      const onAbort = () => {
        // A stopping server aborts everything: its cards stay pending for the next process.
        if (this.closed) return finish({ decision: "cancelled", interrupted: true });
        finish({ decision: "cancelled" });
        void this.cancel(approvalId).catch(() => undefined);
      };
      this.waiters.set(approvalId, finish);
      // Another server instance may answer: the row tells.
      const timer = setInterval(() => {
        this.db.approval
          .findUnique({ where: { id: approvalId } })
          .then((row) => {
            const a = row && toAnswer(row);
            if (a) finish(a);
          })
          .catch(() => undefined);
      }, this.pollMs);
      timer.unref();
      if (signal.aborted || this.closed) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      // The answer may have landed before we listened (re-attached after a restart).
      void this.db.approval.findUnique({ where: { id: approvalId } }).then(
        (row) => {
          const a = row && toAnswer(row);
          if (a) finish(a);
        },
        () => undefined,
      );
    });
  }

  /** The opening turn gave up on its card (it failed before or while waiting). */
  release(approvalId: string): void {
    this.owned.delete(approvalId);
  }

  /** Another server instance answered: read the row now rather than at the next poll. */
  wake(approvalId: string): void {
    if (!this.waiters.has(approvalId)) return;
    void this.db.approval.findUnique({ where: { id: approvalId } }).then(
      (row) => {
        const a = row && toAnswer(row);
        if (a) this.waiters.get(approvalId)?.(a);
      },
      () => undefined,
    );
  }

  hasWaiter(approvalId: string): boolean {
    return this.waiters.has(approvalId);
  }

  /**
   * Records the answer if the approval is still pending and wakes the live waiter if any.
   * `live` says whether a turn was waiting when the answer came: it is read before the write,
   * because the waiter leaves the map as soon as it wakes (by this call or by its own poll).
   */
  async answer(approvalId: string, by: string, choice: Choice, message?: string): Promise<Answer & { live: boolean }> {
    // An answer can arrive between the card going out and the turn starting to wait.
    const live = this.waiters.has(approvalId) || this.owned.has(approvalId);
    const status = choice === "reject" ? "rejected" : "approved";
    const scope = choice === "session" ? "session" : choice === "once" ? "once" : null;
    const text = message?.trim() ? message.trim().slice(0, 4000) : null;
    const r = await this.db.approval.updateMany({
      where: { id: approvalId, status: "pending" },
      data: { status, scope, decidedById: by, decidedAt: new Date(), message: text },
    });
    if (r.count === 0) {
      const row = await this.db.approval.findUnique({ where: { id: approvalId } });
      if (!row) throw new ApprovalError("No such approval.", "NOT_FOUND");
      // One cancelled at a restart says why (pipeline/interrupted.ts): the call did not run.
      if (row.status === "cancelled" && row.message) throw new ApprovalError(row.message, "CONFLICT");
      throw new ApprovalError(`This approval was already ${row.status}.`, "CONFLICT");
    }
    const a: Answer = {
      decision: choice === "reject" ? "rejected" : choice === "session" ? "approved_session" : "approved_once",
      by,
      message: text ?? undefined,
    };
    this.waiters.get(approvalId)?.(a);
    return { ...a, live: live || this.waiters.has(approvalId) || this.owned.has(approvalId) };
  }

  /** Marks a pending approval cancelled; false when it was already answered. */
  async cancel(approvalId: string): Promise<boolean> {
    const r = await this.db.approval.updateMany({
      where: { id: approvalId, status: "pending" },
      data: { status: "cancelled", decidedAt: new Date() },
    });
    this.waiters.get(approvalId)?.({ decision: "cancelled" });
    return r.count === 1;
  }

  /** Claims the right to execute an approved call; true for exactly one caller. */
  async claim(approvalId: string): Promise<boolean> {
    const r = await this.db.approval.updateMany({
      where: { id: approvalId, status: "approved", consumedAt: null },
      data: { consumedAt: new Date() },
    });
    return r.count === 1;
  }

  dispose(): void {
    this.closed = true;
    for (const finish of [...this.waiters.values()]) finish({ decision: "cancelled", interrupted: true });
  }
}
