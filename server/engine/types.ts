// The engine's own vocabulary: the provider-neutral content blocks stored in Message.content,
// the one normalised StreamEvent union every provider adapter yields, and the seams the engine
// takes from other parts (the tool catalog). Nothing here knows a wire format.
import type { Usage } from "../protocol/events";
import type { ProviderKind } from "../protocol/ide-types";

export type { ProviderKind };

/** Content blocks as stored in Message.content (JSON array) and replayed to any provider. */
export type ContentBlock =
  | { type: "text"; text: string }
  /** Reasoning as streamed. Anthropic's signature / redacted data are kept verbatim to send back. */
  | { type: "reasoning"; text: string; signature?: string; redactedData?: string; provider: ProviderKind }
  /** `arguments`: the raw argument JSON exactly as streamed, possibly damaged. */
  | { type: "tool_call"; id: string; name: string; arguments: string }
  | { type: "tool_result"; id: string; name: string; content: string; isError: boolean }
  /** An image the person attached, stored as a reference to its Attachment row; `data` (its
   *  base64) is filled in for a request (images.ts) and never stored. */
  | { type: "image"; attachmentId: string; mediaType: string; data?: string };

export type Role = "user" | "assistant" | "tool";

export interface ConversationMessage {
  role: Role;
  content: ContentBlock[];
}

/** What the tool slot gives the engine: the model-facing definitions, in catalog order. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the input (the slot's CatalogEntry shape). */
  input_schema: Record<string, unknown>;
}

export interface ToolCatalog {
  /** Byte-stable for an unchanged tool set; tools activated mid-session are appended at the tail.
   *  `model`: the turn's model (its first turn's fixes the session's edit tools, tools/edit-tools.ts). */
  catalog(sessionId: string, model?: string): ToolDefinition[] | Promise<ToolDefinition[]>;
}

export type FinishReason = "end_turn" | "tool_use" | "max_tokens" | "cancelled";

/** The one normalised stream every adapter yields; everything downstream sees only this. */
export type StreamEvent =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  /** A complete reasoning block (Anthropic thinking with its signature, or redacted thinking). */
  | { type: "reasoning.block"; text: string; signature?: string; redactedData?: string }
  | { type: "tool.start"; index: number; id: string; name: string }
  | { type: "tool.delta"; index: number; argumentsDelta: string }
  | { type: "tool.end"; index: number }
  /** Cumulative for the request so far; the last one wins. */
  | { type: "usage"; usage: Usage }
  | { type: "finish"; reason: FinishReason; raw: string | null }
  | { type: "error"; code: string; message: string; retryable: boolean };

export interface ModelRequestSpec {
  system: string;
  tools: ToolDefinition[];
  messages: ConversationMessage[];
}

export interface ProviderConfig {
  kind: ProviderKind;
  model: string;
  apiKey: string;
  baseURL?: string;
  /** Anthropic requires a cap (default 8192); OpenAI-compatible servers get one only when set. */
  maxOutputTokens?: number;
  /** Anthropic extended thinking budget; unset: thinking off. */
  thinkingBudget?: number;
}

/** One attempt against the provider: a normalised stream that ends on abort of `signal`. */
export interface ProviderAdapter {
  readonly kind: ProviderKind;
  readonly model: string;
  stream(spec: ModelRequestSpec, signal: AbortSignal): AsyncIterable<StreamEvent>;
}

export const zeroUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 });

/** Adds `u` into `total`. */
export function addUsage(total: Usage, u: Usage) {
  total.inputTokens += u.inputTokens;
  total.outputTokens += u.outputTokens;
  total.cacheReadTokens += u.cacheReadTokens;
  total.cacheWriteTokens += u.cacheWriteTokens;
}
