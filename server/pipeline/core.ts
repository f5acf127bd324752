// The pipeline's shared parts and the state of one call as it moves through plan, approval,
// execution and post-processing. Owned by createPipeline (index.ts).
import type { SessionEventBody } from "../protocol/events";
import type { SubagentService, Tool } from "../tools/tool";
import type { Decision, LoadedPolicy } from "../policy/decide";
import type { Mode } from "../policy/modes";
import type { ApprovalBroker } from "./approvals";
import type { LoopGuard } from "./loop-guard";
import type { Recorder } from "./records";
import type { LockTable } from "./rwlock";
import type { Speculator } from "./speculative";
import type { Logger, PipelineDeps, PipelineLimits } from "./types";
import type { RunOutcome } from "./run";

export interface Core {
  deps: PipelineDeps;
  limits: PipelineLimits;
  log: Logger;
  broker: ApprovalBroker;
  recorder: Recorder;
  loopGuard: LoopGuard;
  locks: LockTable;
  speculator: Speculator;
  /** Aborts every in-flight call of a session (cancelSession). */
  sessionSignal(sessionId: string): AbortSignal;
}

/** One dispatch (or one stored call settled after a restart). */
export interface TurnState {
  sessionId: string;
  turnId: string | null;
  actorId: string | null;
  orgId: string | null;
  policy: LoadedPolicy;
  /** The session's mode for this dispatch, already bounded by the org (services/session-modes.ts). */
  mode: Mode;
  sessionKeys: Set<string>;
  rejected: Map<string, string | undefined>;
  signal: AbortSignal;
  emit(event: SessionEventBody): Promise<void>;
  halt?: string;
  /** The turn's subagent runner, for its tools (absent for a subagent's own calls). */
  subagents?: SubagentService;
  /** A subagent's dispatch: the task call it runs under, and the tools it may call. */
  parent?: { callId: string; allowed: ReadonlySet<string> };
}

/** Whose repeats the loop guard counts: the turn's, or each subagent's own. */
export function guardKey(turn: { sessionId: string; parent?: { callId: string } }): string {
  return turn.parent ? `${turn.sessionId}\u0000sub\u0000${turn.parent.callId}` : turn.sessionId;
}

export interface CallState {
  slot: number;
  providerCallId: string;
  toolCallId: string;
  name: string;
  tool?: Tool;
  input?: unknown;
  fingerprint?: string;
  decision?: Decision;
  /** Read-only, concurrency-safe, approval-free and not interactive. */
  batchable: boolean;
  validated?: boolean;
  startedAt?: number;
  /** Set once the model-facing result is known. */
  content?: string;
  isError?: boolean;
  /** For loop-guard bookkeeping: rejections and cancels neither count nor reset. */
  outcome?: "success" | "failure" | "neutral";
  /** The call left a command running: its output changes over time, so polling it is no loop. */
  running?: boolean;
  /** An early run started while the arguments streamed. */
  early?: Promise<RunOutcome>;
}

export function safeEmit(core: Core, turn: TurnState, event: SessionEventBody): Promise<void> {
  return turn.emit(event).catch((e) => core.log.warn(`event ${event.type} could not be emitted`, e));
}
