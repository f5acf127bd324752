// Subagents (the task tool): a fresh conversation on the turn's own model (the subagent system
// prompt and the job) with the read-only tool surface (pipeline/subagent.ts). Its responses go
// through the turn's response code (runResponse: retries, the forged-call filter, a ModelRequest
// row per attempt with its usage), its calls through the same pipeline (policy, rows, audit,
// events, each carrying the task call's id), and its usage is added to the turn's. Its
// conversation lives in memory only: none of it enters the session's history; the parent gets
// its final report. Its text streams as the task call's progress, so the chat and a replay show
// it inside the task's card, and a cancel of the turn aborts it through the call's signal.
import type { TurnRows } from "../db";
import type { SessionEventBody, Usage } from "../protocol/events";
import type { Dispatcher, ToolResultForModel } from "../pipeline/contract";
import { respond } from "../tools/errors";
import type { SubagentOutcome, SubagentService } from "../tools/tool";
import type { RetryPolicy } from "./providers/retry";
import { runResponse } from "./response";
import type { ContentBlock, ConversationMessage, ProviderAdapter, ToolCatalog } from "./types";

export const SUBAGENT_SYSTEM_PROMPT =
  "You are a subagent of Quiver's coding agent. The agent handed you one self-contained, read-only job: do it with the " +
  "tools you are given (they read and search the workspace; you cannot change files, run commands or ask the person). " +
  "Call tools only through the tool-calling interface. Work efficiently: search before you read, read only what the job needs. " +
  "When you are done, reply with your report and no tool calls: it is the only thing the agent sees of your work, so make it " +
  "complete and specific (paths, line numbers, names, what you found and what you did not find).";

export interface SubagentLimits {
  /** Model requests one subagent may make. */
  maxSteps: number;
  /** Subagents running at once in one turn. */
  maxParallel: number;
}

export const DEFAULT_SUBAGENT_LIMITS: SubagentLimits = { maxSteps: 12, maxParallel: 4 };

export interface SubagentHostDeps {
  rows: TurnRows;
  dispatcher: Dispatcher;
  catalog: ToolCatalog;
  retry: RetryPolicy;
  adapter: ProviderAdapter;
  sessionId: string;
  turnId: string;
  actorId: string;
  limits: SubagentLimits;
  /** The turn's event stream (notices) and the pipeline's (a subagent's calls). */
  emit(body: SessionEventBody): void;
  dispatchEmit(body: SessionEventBody): Promise<void> | void;
  /** Adds a response's usage to the turn's total. */
  addUsage(usage: Usage): void;
  /** Why no further model request may go out for the turn (owner-check.ts), checked before each. */
  ownerGone?(): Promise<string | undefined>;
}

/** The turn's subagent runner, handed to its tools through the dispatch request. */
export function subagentHost(deps: SubagentHostDeps): SubagentService {
  let running = 0;
  return {
    async run(job, call) {
      if (running >= deps.limits.maxParallel) {
        throw respond(
          `Not started: at most ${deps.limits.maxParallel} subagents run at once in a turn, and ${running} are running. ` +
            `Send at most ${deps.limits.maxParallel} task calls in one response, or wait for their reports and send the rest.`,
        );
      }
      running++;
      try {
        return await runSubagent(deps, job, call);
      } finally {
        running--;
      }
    },
  };
}

const textOf = (blocks: readonly ContentBlock[]) =>
  blocks
    .flatMap((b) => (b.type === "text" ? [b.text] : []))
    .join("")
    .trim();

async function runSubagent(
  deps: SubagentHostDeps,
  job: { description: string; prompt: string },
  call: { callId: string; signal: AbortSignal; progress(chunk: string): void },
): Promise<SubagentOutcome> {
  const { sessionId, turnId } = deps;
  const allowed = deps.dispatcher.subagentTools?.(sessionId) ?? new Set<string>();
  // The parent's catalog (the org policy's denials already left out), in its order, less what a subagent may not call.
  const tools = (await deps.catalog.catalog(sessionId)).filter((t) => allowed.has(t.name));
  const messages: ConversationMessage[] = [{ role: "user", content: [{ type: "text", text: job.prompt }] }];
  let calls = 0;
  let lastText = "";
  let position = 0;
  for (let step = 1; ; step++) {
    if (step > deps.limits.maxSteps) {
      const last = lastText ? ` Its last words were: ${lastText}` : "";
      return {
        report: `The subagent stopped after ${deps.limits.maxSteps} model requests (its step limit) without a final report.${last} Give it a narrower job, or split the job across several task calls.`,
        isError: true,
        steps: step - 1,
        calls,
      };
    }
    const gone = await deps.ownerGone?.();
    if (gone) return { report: gone, isError: true, steps: step - 1, calls };
    // The assistant message runResponse writes is kept here, not in the session's history.
    let blocks: ContentBlock[] = [];
    const rows = {
      addMessage: async (m: { content: unknown }) => {
        blocks = m.content as ContentBlock[];
        return `subagent-${call.callId}-${step}`;
      },
      setMessageContent: async (_id: string, content: unknown) => {
        blocks = content as ContentBlock[];
      },
      openRequest: (r: Parameters<TurnRows["openRequest"]>[0]) => deps.rows.openRequest(r),
      closeRequest: (...a: Parameters<TurnRows["closeRequest"]>) => deps.rows.closeRequest(...a),
    };
    const emit = (body: SessionEventBody) => {
      if (body.type === "text.delta") call.progress(body.text);
      else if (body.type === "notice") deps.emit(body);
    };
    const out = await runResponse(
      { rows, sessionId, turnId, emit, allocatePosition: () => position++ },
      deps.adapter,
      { system: SUBAGENT_SYSTEM_PROMPT, tools, messages },
      call.signal,
      deps.retry,
    );
    deps.addUsage(out.usage);
    if (out.finish === "cancelled" || call.signal.aborted)
      return { report: "The subagent was cancelled.", isError: true, steps: step, calls };
    if (out.finish === "error") {
      return {
        report: `The subagent's model request failed: ${out.error?.message ?? "unknown error"}. Its job was not finished.`,
        isError: true,
        steps: step,
        calls,
      };
    }
    messages.push({ role: "assistant", content: blocks });
    lastText = textOf(blocks) || lastText;
    if (out.calls.length === 0) {
      const report = textOf(blocks);
      return report
        ? { report, isError: false, steps: step, calls }
        : { report: "The subagent ended without a report.", isError: true, steps: step, calls };
    }
    call.progress("\n");
    calls += out.calls.length;
    const outcome = await deps.dispatcher.dispatch({
      sessionId,
      turnId,
      actorId: deps.actorId,
      calls: out.calls,
      strict: out.finish === "max_tokens",
      signal: call.signal,
      emit: deps.dispatchEmit,
      parentCallId: call.callId,
    });
    messages.push({ role: "tool", content: resultBlocks(out.calls, outcome.results) });
    if (call.signal.aborted) return { report: "The subagent was cancelled.", isError: true, steps: step, calls };
    if (outcome.halt)
      return { report: `The subagent was stopped: ${outcome.halt.reason}`, isError: true, steps: step, calls };
  }
}

function resultBlocks(
  calls: { providerCallId: string; name: string }[],
  results: ToolResultForModel[],
): ContentBlock[] {
  const byId = new Map(results.map((r) => [r.providerCallId, r]));
  return calls.map((c) => {
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
}
