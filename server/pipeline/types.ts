// What the pipeline is built from. The lead wires these in server/main.ts: the slot's resolver,
// the executor router, the policy and spill services, and an emitter for events of calls that
// settle outside a live turn (an approval answered after a restart).
import type { Db, DbProvider } from "../db";
import type { SessionEventBody } from "../protocol/events";
import type { Tool, ToolServices } from "../tools/tool";
import type { SessionToolState } from "../tools/session";
import type { Executor } from "../executors/contract";
import type { LoadedPolicy } from "../policy/decide";
import type { SpillStore } from "../services/spills";
import type { CutLimits } from "./truncate";

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
