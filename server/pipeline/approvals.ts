// Pending approvals: an Approval row per card, a waiter per live turn, and the answer path.
// The row is the truth (it survives a restart and is shared by server instances); waiters are
// woken in-process at once and otherwise by a slow poll. Execution is claimed by setting
// consumedAt on an approved row, so an approved call runs at most once whoever runs it.
import type { Db } from "../db";
import type { ApprovalDecision, ApprovalRequest } from "../protocol/events";
import type { SessionApprovalState } from "../policy/decide";
import { keysOfFingerprint } from "../policy/fingerprint";

export type Choice = "once" | "session" | "reject";

export interface Answer {
  decision: ApprovalDecision;
  by?: string;
  message?: string;
  /** The server is shutting down: the row stays pending for the next process. */
  interrupted?: boolean;
}

export class ApprovalError extends Error {
  constructor(
    message: string,
    readonly code: "NOT_FOUND" | "FORBIDDEN" | "CONFLICT",
  ) {
    super(message);
    this.name = "ApprovalError";
  }
}

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
    const rows = await this.db.approval.findMany({
      where: { sessionId, OR: [{ status: "approved", scope: "session" }, { status: "rejected" }] },
      select: { status: true, fingerprint: true, exactFingerprint: true, message: true },
    });
    const keys = new Set<string>();
    const rejected = new Map<string, string | undefined>();
    for (const r of rows) {
      if (r.status === "approved") for (const k of keysOfFingerprint(r.fingerprint)) keys.add(k);
      else rejected.set(r.exactFingerprint, r.message ?? undefined);
    }
    return { sessionKeys: keys, rejected };
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
