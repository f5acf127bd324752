// The pipeline's types in one place. The engine's seam: it hands over the tool calls a model
// response finished with and gets back one result per call, in the model's order (the engine
// never runs a tool; the pipeline never talks to the model). The API's: answers to a card and
// the one error their refusals throw. What the pipeline is built from (server/main.ts wires it).
// And the state a dispatch works with: the turn, and one CallRecord per call that the stages
// fill in order — plan.ts creates it and writes its row, approve.ts asks a person when it must,
// run.ts runs it, finish.ts settles it.
import type { Db, DbProvider } from "../db";
import type { ApprovalDecision, SessionEventBody, ToolStatus } from "../protocol/events";
import type { SubagentService, Tool, ToolServices } from "../tools/tool";
import type { SessionToolState } from "../tools/session";
import type { Executor } from "../executors/contract";
import type { Decision, LoadedPolicy } from "../policy/decide";
import type { Mode } from "../policy/modes";
import type { SpillStore } from "../services/spills";
import type { ApprovalBroker } from "./approve";
import type { LoopGuard, Outcome } from "./loop-guard";
import type { Recorder } from "./records";
import type { CallRows } from "../db/turn-rows/calls";
import type { RunOutcome } from "./run";
import type { LockTable } from "./rwlock";
import type { Speculator } from "./speculative";
import type { CutLimits } from "./truncate";

// --- The engine's seam -------------------------------------------------------------------

export interface ModelToolCall {
  /** The provider's id for the call (tool_use id / tool_calls[].id). */
  providerCallId: string;
  /** The name exactly as the model wrote it (the slot's name ladder repairs it). */
  name: string;
  /** The argument JSON exactly as streamed, possibly damaged or cut off. */
  rawArguments: string;
}

export interface ToolResultForModel {
  providerCallId: string;
  /** The name the call resolved to, or the model's own when it did not resolve. */
  name: string;
  /** What the model sees: already truncated, wrapped and annotated. */
  content: string;
  isError: boolean;
}

export interface DispatchRequest {
  sessionId: string;
  turnId: string;
  /** The user on whose behalf the turn runs (audit, approvals). */
  actorId: string;
  calls: ModelToolCall[];
  /** The response ended at the output limit: repaired arguments are refused, not guessed. */
  strict: boolean;
  signal: AbortSignal;
  /** Persists and fans out an event of this session (assigns the sequence number). */
  emit(event: SessionEventBody): Promise<void> | void;
  /** The turn's subagent runner, handed to its tools (the task tool). */
  subagents?: SubagentService;
  /** Set when a subagent makes these calls: the task call it runs under. They resolve against
   *  the read-only subagent surface, never ask a person, and their rows and events carry it. */
  parentCallId?: string;
}

export interface DispatchOutcome {
  results: ToolResultForModel[];
  /** Set when the turn must end after these results (loop guard, fatal tool error). */
  halt?: { reason: string };
}

export interface Dispatcher {
  dispatch(request: DispatchRequest): Promise<DispatchOutcome>;
  /** Optional speculative start while arguments stream; called with the partial JSON so far. */
  onArgumentsProgress?(sessionId: string, turnId: string, call: ModelToolCall & { complete: boolean }): void;
  /** Names of the tools a subagent of the session may call (read-only, no task, no tool_search). */
  subagentTools?(sessionId: string): ReadonlySet<string>;
}

// --- The API's: a person's answer to a card ----------------------------------------------

export type Choice = "once" | "session" | "reject";

export interface Answer {
  decision: ApprovalDecision;
  by?: string;
  message?: string;
  /** The server is shutting down: the row stays pending for the next process. */
  interrupted?: boolean;
}

/** An answer (to an approval card or a question) refused: the API maps the code to its own. */
export class ApprovalError extends Error {
  constructor(
    message: string,
    readonly code: "NOT_FOUND" | "FORBIDDEN" | "CONFLICT",
  ) {
    super(message);
    this.name = "ApprovalError";
  }
}

// --- What the pipeline is built from -----------------------------------------------------

export interface ToolProvider {
  /** The session's tool state (catalog + activated deferred tools); the engine owns and persists it. */
  forSession(sessionId: string): SessionToolState;
}

export interface ExecutorPicker {
  /** The executor for this call, or undefined when none can take it. */
  pick(tool: Tool, input: unknown, sessionId: string): Executor | undefined;
}

export interface Logger {
  warn(message: string, detail?: unknown): void;
  error(message: string, detail?: unknown): void;
}

export interface PipelineLimits {
  /** Concurrent calls in one read-only batch (default 10). */
  concurrency: number;
  shell: CutLimits;
  text: CutLimits;
  /** Deadline handed to executors when the tool names none (default 10 minutes). */
  callTimeoutMs: number;
  /** How often a waiting approval re-reads its row (answers from other instances). */
  approvalPollMs: number;
  /** Bytes of a command's output stored whole (QUIVER_OUTPUT_CEILING_BYTES); past it, its tail. */
  outputCeiling: number;
}

export interface PipelineDeps {
  db: Db;
  /** A call's row and audit entries on the hot path (DbHandle.rows; db/turn-rows/calls.ts). */
  rows: CallRows;
  provider: DbProvider;
  tools: ToolProvider;
  executors: ExecutorPicker;
  policies: { load(orgId: string): Promise<LoadedPolicy> };
  spills: SpillStore;
  /** Extra server-side services for executor:"server" tools (spills and tool_search are built in). */
  toolServices?(sessionId: string): ToolServices;
  /** Emits an event outside a live turn (approval settled after a restart, cancelSession). */
  emit?(sessionId: string, event: SessionEventBody): Promise<void> | void;
  /** The runner's file version of the session's workspace (the loop guard resets when it moves). */
  workspaceVersion?(sessionId: string): number | undefined;
  /** Told when a stored call settled with no turn waiting, so the engine may resume the turn. */
  onSettled?(info: { sessionId: string; turnId: string | null; toolCallId: string }): void;
  log?: Logger;
  limits?: Partial<PipelineLimits>;
}

// --- A dispatch's state ------------------------------------------------------------------

/** The pipeline's shared parts, built once by createPipeline (index.ts). */
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

/** One dispatch (or one stored call settled after a restart), with the parts it runs on. */
export interface TurnState {
  core: Core;
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

/** How a call ended: what its row, its tool.finished event and the model are given. */
export interface Settlement {
  status: ToolStatus;
  content: string;
  isError: boolean;
  /** For loop-guard bookkeeping: rejections and cancels neither count nor reset. */
  outcome: Outcome;
  truncated?: boolean;
  spillRef?: string;
  diff?: string;
  /** False for a command's or a page's own output, which a person is shown as it is. */
  written?: boolean;
}

/** The model-facing result of a call, once known (dispatch.ts may append a loop-guard warning). */
export type CallResult = Pick<Settlement, "content" | "isError" | "outcome">;

/** One call on its way through the stages; each fills its own part, in this order. */
export interface CallRecord {
  readonly turn: TurnState;
  /** Its place in the model's response: results go back in this order. */
  slot: number;
  providerCallId: string;
  /** The model's name until plan resolves it. */
  name: string;

  // plan.ts
  /** The ToolCall row's id; "" until the row is written. */
  toolCallId: string;
  tool?: Tool;
  input?: unknown;
  fingerprint?: string;
  decision?: Decision;
  /** Read-only, concurrency-safe, approval-free and not interactive. */
  batchable: boolean;

  // approve.ts
  /** validateInput passed before the card went out; the run does not repeat it. */
  validated?: boolean;
  /** The card of this call and the session keys an approval for the session adds. */
  approval?: { id: string; keys: string[] };

  // run.ts
  startedAt?: number;
  /** An early run started while the arguments streamed (speculative.ts). */
  early?: Promise<RunOutcome>;
  /** The call left a command running: its output changes over time, so polling it is no loop. */
  running?: boolean;

  // finish.ts (or a refusal anywhere before it)
  result?: CallResult;
}
