// Which provider and model a session talks to: the session's own choice, else QUIVER_PROVIDER /
// QUIVER_MODEL, else whichever API key is set. When nothing is configured the answer says how
// to configure it, in words a user can act on.
import type { Env } from "../../env";
import type { ModelChoices } from "../../protocol/ide-types";
import type { ProviderAdapter, ProviderConfig, ProviderKind } from "../types";
import { createAnthropicAdapter } from "./anthropic";
import { createOpenAIAdapter } from "./openai";

export { streamWithRetries, defaultRetryPolicy, type RetryPolicy, type AttemptEvent } from "./retry";

type ProviderEnv = Pick<
  Env,
  "QUIVER_PROVIDER" | "QUIVER_MODEL" | "ANTHROPIC_API_KEY" | "ANTHROPIC_BASE_URL" | "OPENAI_API_KEY" | "OPENAI_BASE_URL"
>;

export const defaultModels: Record<ProviderKind, string> = { anthropic: "claude-sonnet-5-5", openai: "gpt-4.1" };

export type ProviderResolution = { ok: true; config: ProviderConfig } | { ok: false; message: string };

export const notConfiguredMessage =
  "No model provider is configured. Set ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL) for Anthropic, " +
  "or OPENAI_API_KEY and/or OPENAI_BASE_URL for an OpenAI-compatible API (OpenAI, DeepSeek, OpenRouter, or a local " +
  "Ollama/vLLM server), then restart Quiver. QUIVER_PROVIDER (anthropic | openai) and QUIVER_MODEL choose the default.";

export function resolveProvider(
  env: ProviderEnv,
  session: { provider?: string | null; model?: string | null } = {},
  extra: Pick<ProviderConfig, "maxOutputTokens" | "thinkingBudget"> = {},
): ProviderResolution {
  const wanted = session.provider ?? env.QUIVER_PROVIDER;
  if (wanted !== undefined && wanted !== "anthropic" && wanted !== "openai") {
    return { ok: false, message: `Unknown provider "${wanted}" on this session; use "anthropic" or "openai".` };
  }
  const anthropicReady = !!env.ANTHROPIC_API_KEY;
  // Local OpenAI-compatible servers (Ollama, vLLM) need no key, only a base URL.
  const openaiReady = !!env.OPENAI_API_KEY || !!env.OPENAI_BASE_URL;
  const detected: ProviderKind | undefined = anthropicReady ? "anthropic" : openaiReady ? "openai" : undefined;
  const kind = (wanted as ProviderKind | undefined) ?? detected;
  if (!kind) return { ok: false, message: notConfiguredMessage };
  if (kind === "anthropic" && !anthropicReady) {
    return {
      ok: false,
      message: `The session uses Anthropic but ANTHROPIC_API_KEY is not set. ${notConfiguredMessage}`,
    };
  }
  if (kind === "openai" && !openaiReady) {
    return {
      ok: false,
      message: `The session uses an OpenAI-compatible API but neither OPENAI_API_KEY nor OPENAI_BASE_URL is set. ${notConfiguredMessage}`,
    };
  }
  // QUIVER_MODEL names a model of the default provider; a session on the other one gets its default.
  const model =
    session.model ?? (kind === (env.QUIVER_PROVIDER ?? detected) ? env.QUIVER_MODEL : undefined) ?? defaultModels[kind];
  const config: ProviderConfig =
    kind === "anthropic"
      ? { kind, model, apiKey: env.ANTHROPIC_API_KEY!, baseURL: env.ANTHROPIC_BASE_URL, ...extra }
      : { kind, model, apiKey: env.OPENAI_API_KEY ?? "not-needed", baseURL: env.OPENAI_BASE_URL, ...extra };
  return { ok: true, config };
}

export type { ModelChoices };

export function modelChoices(env: ProviderEnv): ModelChoices {
  const kinds: ProviderKind[] = ["anthropic", "openai"];
  const providers = kinds.map((kind) => {
    const r = resolveProvider(env, { provider: kind });
    const defaultModel = r.ok ? r.config.model : defaultModels[kind];
    return r.ok
      ? { kind, configured: true, defaultModel }
      : {
          kind,
          configured: false,
          defaultModel,
          needs: kind === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY or OPENAI_BASE_URL",
        };
  });
  const fallback = resolveProvider(env);
  return { providers, fallback: fallback.ok ? { provider: fallback.config.kind, model: fallback.config.model } : null };
}

export function createAdapter(config: ProviderConfig): ProviderAdapter {
  return config.kind === "anthropic" ? createAnthropicAdapter(config) : createOpenAIAdapter(config);
}
