// The models a provider offers, from its own list through the official SDKs: Anthropic's
// `GET /v1/models` (anthropic.models.list()) and the OpenAI-compatible `GET /models`
// (openai.models.list(), which OpenAI, OpenRouter, DeepSeek, Ollama and vLLM answer). Whether a
// model takes images comes from the list where it says (Anthropic's capabilities.image_input,
// OpenRouter's architecture.input_modalities, LiteLLM's supports_vision), else from names known
// to take them; undefined when neither tells.
import type { ProviderKind } from "../types";
import { httpFetch } from "./http-fetch";

export interface ListedModel {
  id: string;
  /** The provider's display name, when it gives one. */
  name?: string;
  /** Takes image input: true, false, or undefined when unknown. */
  images?: boolean;
}

export interface ListConfig {
  kind: ProviderKind;
  apiKey: string;
  baseURL?: string;
}

/** Models at most this many (a router such as OpenRouter lists hundreds). */
const MAX_MODELS = 500;

export async function listProviderModels(config: ListConfig, signal?: AbortSignal): Promise<ListedModel[]> {
  const out: ListedModel[] = [];
  if (config.kind === "anthropic") {
    // Loaded when a list is asked for (the SDKs are hundreds of modules the start need not load).
    const { default: Anthropic } = await import("@anthropic-ai/sdk");
    const client = new Anthropic({
      apiKey: config.apiKey,
      baseURL: config.baseURL ?? null,
      maxRetries: 0,
      timeout: 10_000,
      fetch: httpFetch,
    });
    for await (const m of client.models.list({ limit: 100 }, { signal })) {
      if ((m as { lifecycle?: string }).lifecycle === "retired") continue;
      const said = m.capabilities?.image_input?.supported;
      out.push({ id: m.id, name: m.display_name || undefined, images: said ?? knownToTakeImages(m.id) });
      if (out.length >= MAX_MODELS) break;
    }
  } else {
    const { default: OpenAI } = await import("openai");
    const client = new OpenAI({
      apiKey: config.apiKey,
      baseURL: config.baseURL,
      maxRetries: 0,
      timeout: 10_000,
      fetch: httpFetch,
    });
    for await (const m of client.models.list({ signal })) {
      const meta = m as unknown as {
        name?: string;
        architecture?: { input_modalities?: string[] };
        input_modalities?: string[];
        supports_vision?: boolean;
      };
      const modalities = meta.architecture?.input_modalities ?? meta.input_modalities;
      const said = modalities ? modalities.includes("image") : meta.supports_vision;
      out.push({
        id: m.id,
        name: typeof meta.name === "string" && meta.name !== m.id ? meta.name : undefined,
        images: said ?? knownToTakeImages(m.id),
      });
      if (out.length >= MAX_MODELS) break;
    }
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

const TAKES_IMAGES = [
  /^claude-(3|sonnet|opus|haiku)/,
  /^gpt-4o/,
  /^gpt-4\.1/,
  /^gpt-5/,
  /^o[134](-|$)/,
  /vision/,
  /^gemini/,
  /llava/,
  /-vl\b/,
  /pixtral/,
  /^llama-?4/,
];
const TEXT_ONLY = [/^gpt-3\.5/, /^deepseek-(chat|reasoner|coder)/, /^o[13]-mini/, /embed/, /whisper/, /^tts-/];

/** For lists that do not say: names known to take images, known not to, else undefined. */
export function knownToTakeImages(id: string): boolean | undefined {
  const name = id.slice(id.lastIndexOf("/") + 1).toLowerCase();
  if (TEXT_ONLY.some((r) => r.test(name))) return false;
  if (TAKES_IMAGES.some((r) => r.test(name))) return true;
  return undefined;
}
