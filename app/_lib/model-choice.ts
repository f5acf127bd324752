// What the model picker shows: the provider and model a session's next turn will use, worked out
// as the engine does (engine/providers: the session's choice, else the server's default).
import type { ModelChoices } from "../../server/protocol/ide-types";

export type { ModelChoices };

export const PROVIDER_LABEL: Record<"anthropic" | "openai", string> = {
  anthropic: "Anthropic",
  openai: "OpenAI-compatible",
};

export interface EffectiveModel {
  provider: "anthropic" | "openai";
  /** Undefined: nothing is configured to answer. */
  model?: string;
  /** The session chose nothing: the server's default answers. */
  isDefault: boolean;
}

export function effectiveModel(
  session: { provider: string | null; model: string | null },
  choices: ModelChoices,
): EffectiveModel {
  const chosen = choices.providers.find((p) => p.kind === session.provider);
  if (chosen) return { provider: chosen.kind, model: session.model ?? chosen.defaultModel, isDefault: false };
  if (!choices.fallback) return { provider: "anthropic", isDefault: true };
  // A model chosen without a provider is the default provider's (as the engine reads it).
  return {
    provider: choices.fallback.provider,
    model: session.model ?? choices.fallback.model,
    isDefault: session.model === null,
  };
}
