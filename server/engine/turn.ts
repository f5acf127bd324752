// The agent loop of one turn: build the request (system, catalog, stored history: an
// append-only prefix), stream a response, hand its finished tool calls to the pipeline,
// store the results, and go again until the model ends its turn, the user cancels, an error
// occurs or the step limit is reached. However it ends, the turn row, the history and the
// event log are left consistent. A database that stops taking writes (disk full, read-only:
// db/faults.ts) ends the turn at the first refused write with an error saying why and where;
// what could not be recorded then is handed to the engine (finish.ts) to record once it can.
import type { Db, DbProvider, TurnRows } from "../db";
import { isDatabaseFault } from "../db/faults";
import type { EventHub } from "../hub/events";
import type { SessionEventBody, TurnStatus, Usage } from "../protocol/events";
import type { Dispatcher, DispatchOutcome, ModelToolCall } from "../pipeline/contract";
import { compactConversation, compactingNotice, worthCompacting, type CompactReason } from "./compact";
import { COMPACT_AT, contextOverflow, contextTokens, type ContextWindows } from "./context";
import { loadConversation } from "./history";
import { announceMode } from "./mode-note";
import { ownerGone } from "./owner-check";
import type { ImageData } from "./images";
import type { RetryPolicy } from "./providers/retry";
import { runResponse } from "./response";
import { finishTurn, type Unrecorded } from "./finish";
import { DEFAULT_SUBAGENT_LIMITS, subagentHost, type SubagentLimits } from "./subagent";
import type { ContentBlock, ConversationMessage, ProviderAdapter, ToolCatalog, ToolDefinition } from "./types";
import { addUsage, zeroUsage } from "./types";

export interface TurnDeps {
  db: Db;
  /** The database's provider: the mode read before each request through plain SQL (mode-note.ts). */
  dbProvider?: DbProvider;
  rows: TurnRows;
  hub: EventHub;
  dispatcher: Dispatcher;
  catalog: ToolCatalog;
  systemPrompt(sessionId: string): Promise<string>;
  retry: RetryPolicy;
  maxSteps: number;
  context: TurnContext;
  /** Attached images' bytes for requests. */
  images: ImageData;
  log(message: string, err?: unknown): void;
  /** What a turn's end could not record (the database refused it): the engine records it later. */
  unrecorded(sessionId: string, what: Unrecorded): void;
  /** Bounds of the task tool's subagents (default DEFAULT_SUBAGENT_LIMITS). */
  subagents?: SubagentLimits;
}

/** What the engine knows of sessions' context use across turns. */
export interface TurnContext {
  windows: ContextWindows;
  /** Tokens the session's latest model request filled (0: none, or unknown since a summary). */
  lastTokens(sessionId: string): Promise<number>;
  setLastTokens(sessionId: string, tokens: number): void;
}

export interface TurnRun {
  sessionId: string;
  turnId: string;
  actorId: string;
  adapter: ProviderAdapter;
  signal: AbortSignal;
  /** Position of the first message this turn may write. */
  firstPosition: number;
  /** The server instance running it, as begun (none: a lone server). */
  instanceId?: string;
  /** "/compact": summarize the conversation and end, with no model reply. */
  compactOnly?: boolean;
  /** Set when the server is shutting down: the turn ends as interrupted, not cancelled. */
  shutdown(): boolean;
  /** Set when a peer took the turn over (this instance was thought gone): it ends here without
   *  a write or an event, since the peer has recorded its end. */
  abandoned(): boolean;
  /** Called once the turn is recorded as ended, just before turn.finished goes out, so a
   * client that reacts to that event at once can start the next turn. */
  release(): void;
}

export async function runTurn(deps: TurnDeps, run: TurnRun): Promise<void> {
  const { rows, hub } = deps;
  const { sessionId, turnId } = run;
  // The first write the database refuses stops the turn (a full disk would refuse the rest).
  const faulted = new AbortController();
  const signal = AbortSignal.any([run.signal, faulted.signal]);
  let fault: Error | undefined;
  const refused = (err: unknown) => {
    if (!isDatabaseFault(err)) return;
    fault ??= err;
    faulted.abort();
  };
  let position = run.firstPosition;
  // Posted, not published: no promise per token (EventHub.post); emitted() waits until all
  // of them are durable. A failed one is logged once per turn, with the count at its end, not
  // once per token.
  let lost = 0;
  const unrecorded = (err: unknown, ev?: { type: string }) => {
    if (lost++ === 0)
      deps.log(
        `event ${ev?.type ?? "(unnumbered)"} of session ${sessionId} was not recorded (turn ${turnId}; later ones are counted)`,
        err,
      );
    refused(err);
  };
  const emit = (body: SessionEventBody) => {
    if (run.abandoned()) return;
    hub.post(sessionId, body, unrecorded);
  };
  const emitted = () => hub.written(sessionId);
  const total: Usage = zeroUsage();
  let status: TurnStatus = "completed";
  let stopReason: string | undefined;
  let error: { code: string; message: string } | undefined;
  // Whether a stored assistant message may hold calls with no result yet; only then does the
  // end of the turn read the history to answer them.
  let openCalls = false;

  // A call still running when a peer took the turn over settles after the peer published
  // turn.finished: its events and result belong to nobody now.
  const dispatchEmit = (body: SessionEventBody) =>
    run.abandoned() ? undefined : hub.publish(sessionId, body).then(() => undefined);
  // The task tool's subagents: the turn's model and signal (through each call's), their usage in the turn's total.
  const subagents = subagentHost({
    rows,
    dispatcher: deps.dispatcher,
    catalog: deps.catalog,
    retry: deps.retry,
    adapter: run.adapter,
    sessionId,
    turnId,
    actorId: run.actorId,
    limits: deps.subagents ?? DEFAULT_SUBAGENT_LIMITS,
    emit,
    dispatchEmit,
    ownerGone: () => ownerGone(deps.db, sessionId, deps.dbProvider),
    addUsage: (u) => {
      addUsage(total, u);
      emit({ type: "usage", turnId, usage: { ...total } });
    },
  });

  try {
    const system = await deps.systemPrompt(sessionId);
    const window = () => deps.context.windows.of(run.adapter.kind, run.adapter.model);
    let tokens = await deps.context.lastTokens(sessionId);
    // A request that did not fit is answered by one summary a turn: a second would not fit either.
    let overflowed = false;
    const compact = async (
      why: CompactReason,
      keep: number,
      midTurn: boolean,
      tools: ToolDefinition[],
      messages: ConversationMessage[],
    ) => {
      emit(compactingNotice(why, tokens, window()));
      const ctx = { rows, sessionId, turnId, emit, allocatePosition: () => position++ };
      const r = await compactConversation(
        ctx,
        run.adapter,
        { system, tools, messages, keep, midTurn, tokens, shrink: why === "overflow" },
        signal,
        deps.retry,
      );
      addUsage(total, r.usage);
      if (!r.ok) {
        if (!signal.aborted)
          emit({
            type: "notice",
            level: "warn",
            code: "context_compact_failed",
            text: `The conversation could not be summarized: ${r.message}`,
          });
        return false;
      }
      tokens = 0;
      deps.context.setLastTokens(sessionId, 0);
      return true;
    };
    if (run.compactOnly) {
      // "/compact": the conversation summarized now, the message asking for it with it; no reply.
      const messages = await loadConversation(rows, sessionId, deps.images);
      if (worthCompacting(messages, 0))
        await compact("asked", 0, false, await deps.catalog.catalog(sessionId, run.adapter.model), messages);
      else
        emit({
          type: "notice",
          level: "info",
          code: "context_compact_skipped",
          text: "There is not enough conversation to summarize yet.",
        });
      if (signal.aborted) status = "cancelled";
      else stopReason = "compacted";
      emit({ type: "usage", turnId, usage: { ...total }, context: { tokens, window: window() } });
    }
    for (let step = 1; !run.compactOnly; step++) {
      if (step > deps.maxSteps) {
        stopReason = "step_limit";
        emit({
          type: "notice",
          level: "warn",
          code: "step_limit",
          text: `The turn stopped after ${deps.maxSteps} model requests (the step limit). Send a message to continue.`,
        });
        break;
      }
      const gone = await ownerGone(deps.db, sessionId, deps.dbProvider);
      if (gone) {
        status = "cancelled";
        stopReason = "owner_removed";
        emit({ type: "notice", level: "warn", code: "owner_removed", text: gone });
        break;
      }
      const tools = await deps.catalog.catalog(sessionId, run.adapter.model);
      let messages = await loadConversation(rows, sessionId, deps.images);
      const keep = step === 1 ? 1 : 0;
      if (tokens >= COMPACT_AT * window() && worthCompacting(messages, keep)) {
        if (await compact("full", keep, step > 1, tools, messages))
          messages = await loadConversation(rows, sessionId, deps.images);
        if (signal.aborted) {
          status = "cancelled";
          break;
        }
      }
      // The mode is said in the newest message, never in the prefix (mode-note.ts).
      messages = await announceMode(deps.db, sessionId, messages, deps.dbProvider);
      const spec = { system, tools, messages };
      const ctx = {
        rows,
        sessionId,
        turnId,
        emit,
        emitted,
        allocatePosition: () => position++,
        onArgumentsProgress: deps.dispatcher.onArgumentsProgress
          ? (call: ModelToolCall & { complete: boolean }) =>
              deps.dispatcher.onArgumentsProgress!(sessionId, turnId, call)
          : undefined,
      };
      openCalls = true;
      const out = await runResponse(ctx, run.adapter, spec, signal, deps.retry);
      openCalls = out.storedCalls;
      addUsage(total, out.usage);
      if (contextTokens(out.usage) > 0) {
        tokens = contextTokens(out.usage);
        deps.context.setLastTokens(sessionId, tokens);
      }
      emit({ type: "usage", turnId, usage: { ...total }, context: { tokens, window: window() } });
      if (out.finish === "cancelled" || signal.aborted) {
        status = "cancelled";
        break;
      }
      const overflow = out.finish === "error" && out.error ? contextOverflow(out.error.message) : undefined;
      if (overflow && !overflowed && worthCompacting(messages, keep)) {
        overflowed = true;
        if (overflow.window) deps.context.windows.learn(run.adapter.kind, run.adapter.model, overflow.window);
        tokens = Math.max(tokens, window());
        if (await compact("overflow", keep, step > 1, tools, messages)) continue;
        if (signal.aborted) {
          status = "cancelled";
          break;
        }
      }
      if (out.finish === "error") {
        status = "failed";
        error = out.error;
        break;
      }
      if (out.calls.length === 0) {
        stopReason = out.finish;
        if (out.finish === "max_tokens") {
          emit({
            type: "notice",
            level: "warn",
            code: "max_tokens",
            text: "The reply was cut off at the output token limit. Ask the model to continue if you need the rest.",
          });
        }
        break;
      }
      // The turn goes on: its usage so far is recorded now (the last step's goes with the end).
      await rows.turnUsage(turnId, total);
      await emitted();
      const outcome = await deps.dispatcher.dispatch({
        sessionId,
        turnId,
        actorId: run.actorId,
        calls: out.calls,
        strict: out.finish === "max_tokens",
        signal,
        emit: dispatchEmit,
        subagents,
      });
      if (run.abandoned()) break;
      await storeResults(rows, { sessionId, turnId, position: position++ }, out.calls, outcome);
      openCalls = false;
      if (signal.aborted) {
        status = "cancelled";
        break;
      }
      if (outcome.halt) {
        status = "failed";
        stopReason = "halted";
        error = { code: "turn_halted", message: outcome.halt.reason };
        break;
      }
    }
  } catch (err) {
    refused(err);
    if (fault) status = "failed";
    else if (signal.aborted) status = "cancelled";
    else {
      status = "failed";
      error = { code: "engine_error", message: `The turn failed: ${(err as Error).message ?? String(err)}` };
      deps.log(`turn ${turnId} failed`, err);
    }
  }
  if (fault) {
    status = "failed";
    stopReason = "database_error";
    error = {
      code: "database_unwritable",
      message: `The turn stopped. ${fault.message} What was shown after this point was not saved: it will be missing after a reload.`,
    };
  }
  if (status === "cancelled" && run.shutdown()) status = "interrupted";
  stopReason ??=
    status === "cancelled"
      ? "cancelled"
      : status === "interrupted"
        ? "server_shutdown"
        : status === "failed"
          ? "error"
          : undefined;
  await finishTurn(deps, run, { status, stopReason, error, usage: total, openCalls }, emitted);
  if (lost > 1) deps.log(`${lost} event(s) of turn ${turnId} were not recorded`);
}

async function storeResults(
  rows: TurnRows,
  at: { sessionId: string; turnId: string; position: number },
  calls: ModelToolCall[],
  outcome: DispatchOutcome,
) {
  const byId = new Map(outcome.results.map((r) => [r.providerCallId, r]));
  const content: ContentBlock[] = calls.map((c) => {
    const r = byId.get(c.providerCallId);
    return r
      ? { type: "tool_result", id: c.providerCallId, name: r.name, content: r.content, isError: r.isError }
      : {
          type: "tool_result",
          id: c.providerCallId,
          name: c.name,
          content: "No result was produced for this call.",
          isError: true,
        };
  });
  await rows.addMessage({ ...at, role: "tool", content });
}
