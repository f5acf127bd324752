// The dispatch pipeline: the only path from a model's tool call to the result the model sees.
// createPipeline wires the parts (approvals, loop guard, locks, speculation, records) around the
// slot, the executors, policy and spills, and gives the engine a Dispatcher plus the controls
// the API and the process need (answer an approval, cancel a session, recover, dispose).
import {
  ApprovalError,
  type Answer,
  type Choice,
  type Core,
  type Dispatcher,
  type DispatchOutcome,
  type DispatchRequest,
  type ModelToolCall,
  type PipelineDeps,
  type PipelineLimits,
} from "./contract";
import { ApprovalBroker } from "./approve";
import { dispatch } from "./dispatch";
import { LoopGuard } from "./loop-guard";
import { Recorder } from "./records";
import { recover, settleOrphan } from "./resume";
import { answerQuestion, QUESTION, type AnsweredQuestion } from "./questions";
import type { QuestionAnswer } from "../protocol/todos-questions";
import { LockTable } from "./rwlock";
import { Speculator } from "./speculative";
import { DEFAULT_OUTPUT_CEILING, SHELL_LIMITS, TEXT_LIMITS } from "./truncate";
import type { Actor } from "../services/types";
import { authorize as authorizeAccess } from "../auth/authorize";
import { subagentTools } from "./subagent";
import { logFn } from "../log";

export { ApprovalError } from "./contract";
export type { Choice, PipelineDeps } from "./contract";

export interface PendingApproval {
  approvalId: string;
  callId: string;
  request: unknown;
  createdAt: Date;
}

/** Several server instances on one database (hub/commands.ts): approvals answered here for a
 *  turn that runs on another instance are settled there. */
export interface PipelineCluster {
  /** The approval's turn is running on another live instance. */
  runsElsewhere(approvalId: string): Promise<boolean>;
  /** Tells the other instances the approval was answered. */
  announce(approvalId: string): Promise<void>;
}

export interface Pipeline extends Dispatcher {
  dispatch(request: DispatchRequest): Promise<DispatchOutcome>;
  onArgumentsProgress(sessionId: string, turnId: string, call: ModelToolCall & { complete: boolean }): void;
  subagentTools(sessionId: string): ReadonlySet<string>;
  /** Answers a pending approval as `actor` (the session's owner or an org admin/owner). */
  answerApproval(actor: Actor, approvalId: string, choice: Choice, message?: string): Promise<Answer>;
  /** Answers ask_user's question card as `actor` (the session's creator only). */
  answerQuestion(actor: Actor, sessionId: string, callId: string, answer: QuestionAnswer): Promise<AnsweredQuestion>;
  /** Another instance answered an approval a turn here may be waiting for. */
  wakeApproval(approvalId: string): void;
  /** Pending approval cards of a session (page reload). */
  pendingApprovals(actor: Actor, sessionId: string): Promise<PendingApproval[]>;
  /** Cancels everything of the session: in-flight calls, pending approvals, early runs. */
  cancelSession(sessionId: string): Promise<void>;
  /** Start-up: fails calls cut off by a stop and settles approvals answered just before it. */
  recover(): Promise<{ interrupted: number; settled: number }>;
  /**
   * Stops waiting (pending approvals stay pending for the next process) and aborts in-flight
   * calls and early runs. Call it before the engine interrupts its turns: an abort the pipeline
   * sees first is a person's cancel and cancels the card.
   */
  dispose(): void;
}

export function createPipeline(deps: PipelineDeps, cluster?: PipelineCluster): Pipeline {
  const limits: PipelineLimits = {
    concurrency: 10,
    shell: SHELL_LIMITS,
    text: TEXT_LIMITS,
    callTimeoutMs: 10 * 60_000,
    approvalPollMs: 2000,
    outputCeiling: DEFAULT_OUTPUT_CEILING,
    ...deps.limits,
  };
  const log = deps.log ?? { warn: logFn("pipeline", "warn"), error: logFn("pipeline") };
  const sessionControllers = new Map<string, AbortController>();
  const sessionSignal = (sessionId: string) => {
    let c = sessionControllers.get(sessionId);
    if (!c || c.signal.aborted) sessionControllers.set(sessionId, (c = new AbortController()));
    return c.signal;
  };
  const loopGuard = new LoopGuard((sessionId) => deps.workspaceVersion?.(sessionId));
  const locks = new LockTable();
  const core: Core = {
    deps,
    limits,
    log,
    loopGuard,
    locks,
    sessionSignal,
    broker: new ApprovalBroker(deps.db, limits.approvalPollMs),
    recorder: new Recorder(deps.rows),
    speculator: new Speculator(deps, limits, loopGuard, locks, sessionSignal),
  };
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(p: Promise<T>) => {
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p)).catch(() => undefined);
    return p;
  };

  async function authorize(actor: Actor, sessionId: string) {
    const session = await deps.db.session.findUnique({
      where: { id: sessionId },
      select: { orgId: true, ownerId: true },
    });
    if (!session || session.orgId !== actor.orgId) throw new ApprovalError("No such session.", "NOT_FOUND");
    // The one rule (server/auth/authorize.ts): cards are answered by the session's creator only.
    try {
      authorizeAccess({ kind: "person", actor }, "approval.answer", {
        kind: "session",
        sessionId,
        orgId: session.orgId,
        creatorId: session.ownerId,
      });
    } catch (err) {
      throw new ApprovalError((err as Error).message, "FORBIDDEN");
    }
  }

  return {
    dispatch: (request) => track(dispatch(core, request)),
    subagentTools: (sessionId) => subagentTools(deps.tools, sessionId),
    onArgumentsProgress(sessionId, turnId, call) {
      try {
        core.speculator.offer(sessionId, turnId, call);
      } catch (e) {
        log.warn("speculative start failed", e);
      }
    },
    async answerApproval(actor, approvalId, choice, message) {
      const row = await deps.db.approval.findUnique({
        where: { id: approvalId },
        select: { sessionId: true, fingerprint: true },
      });
      // A question (ask_user) is answered with questions.answer, never approved.
      if (!row || row.fingerprint === QUESTION) throw new ApprovalError("No such approval.", "NOT_FOUND");
      await authorize(actor, row.sessionId);
      const { live, ...answer } = await core.broker.answer(approvalId, actor.userId, choice, message);
      if (!live && cluster && (await cluster.runsElsewhere(approvalId))) {
        // The turn waiting for it runs on another instance: it wakes and runs the call there.
        await cluster.announce(approvalId);
      } else if (!live) {
        // No live turn waits (restart, or the turn ended): settle it here, at most once.
        void track(
          settleOrphan(core, approvalId).catch((e) => log.error(`approval ${approvalId} could not be settled`, e)),
        );
      }
      return answer;
    },
    async answerQuestion(actor, sessionId, callId, answer) {
      await authorize(actor, sessionId);
      const elsewhere =
        cluster && (async (id: string) => void ((await cluster.runsElsewhere(id)) && (await cluster.announce(id))));
      return answerQuestion(core, sessionId, callId, answer, actor.userId, elsewhere || undefined);
    },
    async pendingApprovals(actor, sessionId) {
      const session = await deps.db.session.findUnique({ where: { id: sessionId }, select: { orgId: true } });
      if (!session || session.orgId !== actor.orgId) throw new ApprovalError("No such session.", "NOT_FOUND");
      const rows = await deps.db.approval.findMany({
        where: { sessionId, status: "pending", fingerprint: { not: QUESTION } },
        orderBy: { createdAt: "asc" },
      });
      return rows.map((r) => ({ approvalId: r.id, callId: r.toolCallId, request: r.request, createdAt: r.createdAt }));
    },
    async cancelSession(sessionId) {
      sessionControllers.get(sessionId)?.abort(new Error("cancelled"));
      sessionControllers.delete(sessionId);
      // Orphaned cards (no live turn) are cancelled in the rows; live waiters already woke.
      const pending = await deps.db.approval.findMany({
        where: { sessionId, status: "pending" },
        select: { id: true, toolCallId: true },
      });
      for (const p of pending) {
        if (await core.broker.cancel(p.id)) {
          await deps.db.toolCall.updateMany({
            where: { id: p.toolCallId, status: "awaiting_approval" },
            data: {
              status: "cancelled",
              isError: true,
              result: "Cancelled by the person before it ran.",
              endedAt: new Date(),
            },
          });
          await deps.emit?.(sessionId, {
            type: "approval.resolved",
            approvalId: p.id,
            callId: p.toolCallId,
            decision: "cancelled",
          });
        }
      }
    },
    wakeApproval: (approvalId) => core.broker.wake(approvalId),
    recover: () => recover(core),
    dispose() {
      core.speculator.dispose();
      core.broker.dispose();
      for (const c of sessionControllers.values()) c.abort(new Error("server stopping"));
      sessionControllers.clear();
    },
  };
}
