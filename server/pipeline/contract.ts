// The seam between the engine and the pipeline: the engine hands over the tool calls a model
// response finished with and gets back one result per call, in the model's order. The engine
// never runs a tool; the pipeline never talks to the model.
import type { SessionEventBody } from "../protocol/events";
import type { SubagentService } from "../tools/tool";

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
