// Test helpers for the engine, imported by tests and the benchmarks only: the fake provider a
// suite shares (started once, its recorded requests cleared before each test, every scripted
// step used up after it) and the environment pointing a wire format at it; draining a
// normalised stream into what a turn would assemble; a dispatcher that records requests.
import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";
import { startFakeProvider, type FakeProvider } from "../engine/fake-provider/server";
import type { FinishReason, ProviderConfig, ProviderKind, StreamEvent } from "../engine/types";
import type { AttemptEvent } from "../engine/providers/retry";
import type { DispatchRequest, Dispatcher, ToolResultForModel } from "../pipeline/contract";
import type { EventHub } from "../hub/events";
import type { SessionEvent } from "../protocol/events";

export interface Assembled {
  text: string;
  reasoning: string;
  reasoningBlocks: Extract<StreamEvent, { type: "reasoning.block" }>[];
  calls: { id: string; name: string; arguments: string; ended: boolean }[];
  finish?: { reason: FinishReason; raw: string | null };
  usage?: Extract<StreamEvent, { type: "usage" }>["usage"];
  errors: Extract<StreamEvent, { type: "error" }>[];
  retries: number[];
  events: AttemptEvent[];
}

export async function assemble(stream: AsyncIterable<AttemptEvent>): Promise<Assembled> {
  const a: Assembled = { text: "", reasoning: "", reasoningBlocks: [], calls: [], errors: [], retries: [], events: [] };
  for await (const ev of stream) {
    a.events.push(ev);
    switch (ev.type) {
      case "text":
        a.text += ev.text;
        break;
      case "reasoning":
        a.reasoning += ev.text;
        break;
      case "reasoning.block":
        a.reasoningBlocks.push(ev);
        break;
      case "tool.start":
        a.calls[ev.index] = { id: ev.id, name: ev.name, arguments: "", ended: false };
        break;
      case "tool.delta":
        a.calls[ev.index].arguments += ev.argumentsDelta;
        break;
      case "tool.end":
        a.calls[ev.index].ended = true;
        break;
      case "usage":
        a.usage = ev.usage;
        break;
      case "finish":
        a.finish = { reason: ev.reason, raw: ev.raw };
        break;
      case "error":
        a.errors.push(ev);
        break;
      case "retry":
        a.retries.push(ev.delayMs);
        break;
    }
  }
  return a;
}

export function fakeConfig(
  kind: ProviderKind,
  fake: FakeProvider,
  extra: Partial<ProviderConfig> = {},
): ProviderConfig {
  return kind === "anthropic"
    ? { kind, model: "claude-fake", apiKey: "test-key", baseURL: fake.anthropicBaseURL, ...extra }
    : { kind, model: "gpt-fake", apiKey: "test-key", baseURL: fake.openaiBaseURL, ...extra };
}

export const fastRetries = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 5_000 };

/**
 * A small stand-in for the pipeline: runs `echo` (returns its input) and `wait` (blocks until
 * cancelled), answers anything else as unknown, refuses unparseable arguments (and, in strict
 * mode, says the call was cut off), and records every request it got.
 */
export function testDispatcher(opts: { halt?: string } = {}): Dispatcher & { requests: DispatchRequest[] } {
  const requests: DispatchRequest[] = [];
  return {
    requests,
    async dispatch(req) {
      requests.push(req);
      const results: ToolResultForModel[] = [];
      for (const call of req.calls) {
        const started = Date.now();
        let input: unknown;
        let content: string;
        let isError = false;
        try {
          input = JSON.parse(call.rawArguments);
        } catch {
          input = {};
        }
        await req.emit({
          type: "tool.started",
          turnId: req.turnId,
          callId: call.providerCallId,
          name: call.name,
          input,
          summary: `${call.name}`,
        });
        try {
          JSON.parse(call.rawArguments);
          if (call.name === "echo") content = `echo: ${call.rawArguments}`;
          else if (call.name === "wait") {
            await new Promise<void>((resolve) =>
              req.signal.aborted ? resolve() : req.signal.addEventListener("abort", () => resolve(), { once: true }),
            );
            content = "cancelled";
            isError = true;
          } else {
            content = `Unknown tool ${call.name}.`;
            isError = true;
          }
        } catch {
          isError = true;
          content = req.strict
            ? "The arguments were cut off at the output limit; send the call again, complete."
            : "The arguments are not valid JSON.";
        }
        await req.emit({
          type: "tool.finished",
          callId: call.providerCallId,
          status: isError ? "failed" : "succeeded",
          output: content,
          isError,
          truncated: false,
          durationMs: Date.now() - started,
        });
        results.push({ providerCallId: call.providerCallId, name: call.name, content, isError });
      }
      return { results, ...(opts.halt ? { halt: { reason: opts.halt } } : {}) };
    },
  };
}

/** Events of a session from `afterSeq` until the turn's turn.finished (inclusive). */
export async function eventsUntilFinished(
  hub: EventHub,
  sessionId: string,
  turnId: string,
  afterSeq = 0,
): Promise<SessionEvent[]> {
  const ctl = new AbortController();
  const out: SessionEvent[] = [];
  for await (const ev of hub.subscribe(sessionId, afterSeq, ctl.signal)) {
    out.push(ev);
    if (ev.type === "turn.finished" && ev.turnId === turnId) break;
  }
  ctl.abort();
  return out;
}

/** Resolves with the first event matching `pred` (live or from the log). */
export async function waitForEvent(
  hub: EventHub,
  sessionId: string,
  pred: (ev: SessionEvent) => boolean,
): Promise<SessionEvent> {
  const ctl = new AbortController();
  try {
    for await (const ev of hub.subscribe(sessionId, 0, ctl.signal)) if (pred(ev)) return ev;
    throw new Error("subscription ended");
  } finally {
    ctl.abort();
  }
}

export function useFakeProvider(): { readonly current: FakeProvider } {
  const ref = {} as { current: FakeProvider };
  beforeAll(async () => {
    ref.current = await startFakeProvider();
  });
  afterAll(() => ref.current.close());
  beforeEach(() => {
    ref.current.requests.length = 0;
  });
  afterEach(() => {
    expect(ref.current.pending()).toBe(0);
  });
  return ref;
}

/** QUIVER_PROVIDER, a key and the base URL of `kind` on the fake provider. */
export function fakeProviderEnv(kind: ProviderKind, fake: FakeProvider) {
  return kind === "anthropic"
    ? { QUIVER_PROVIDER: "anthropic" as const, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.anthropicBaseURL }
    : { QUIVER_PROVIDER: "openai" as const, OPENAI_API_KEY: "k", OPENAI_BASE_URL: fake.openaiBaseURL };
}
