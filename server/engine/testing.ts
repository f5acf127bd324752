// Test helpers for the engine: drain a normalised stream into what a turn would assemble, and
// a provider config pointed at a fake provider. Imported by tests and the benchmark only.
import type { FakeProvider } from "./fake-provider/server";
import type { FinishReason, ProviderConfig, ProviderKind, StreamEvent } from "./types";
import type { AttemptEvent } from "./providers/retry";

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
      case "text": a.text += ev.text; break;
      case "reasoning": a.reasoning += ev.text; break;
      case "reasoning.block": a.reasoningBlocks.push(ev); break;
      case "tool.start": a.calls[ev.index] = { id: ev.id, name: ev.name, arguments: "", ended: false }; break;
      case "tool.delta": a.calls[ev.index].arguments += ev.argumentsDelta; break;
      case "tool.end": a.calls[ev.index].ended = true; break;
      case "usage": a.usage = ev.usage; break;
      case "finish": a.finish = { reason: ev.reason, raw: ev.raw }; break;
      case "error": a.errors.push(ev); break;
      case "retry": a.retries.push(ev.delayMs); break;
    }
  }
  return a;
}

export function fakeConfig(kind: ProviderKind, fake: FakeProvider, extra: Partial<ProviderConfig> = {}): ProviderConfig {
  return kind === "anthropic"
    ? { kind, model: "claude-fake", apiKey: "test-key", baseURL: fake.anthropicBaseURL, ...extra }
    : { kind, model: "gpt-fake", apiKey: "test-key", baseURL: fake.openaiBaseURL, ...extra };
}

export const fastRetries = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20, maxRetryAfterMs: 5_000 };
