// The model picker's list: each configured provider's models (engine/providers/model-list.ts),
// cached for a short while so opening the picker does not ask the provider every time, and a
// failure said in words with an empty list, so the picker falls back to typing a name. A
// failure is kept for less time than a list, so a provider that comes back is seen soon.
import { resolveProvider } from "../engine/providers/index";
import { listProviderModels, type ListConfig, type ListedModel } from "../engine/providers/model-list";
import type { ProviderKind } from "../engine/types";

export interface ModelListing {
  provider: ProviderKind;
  /** Sorted by id; empty when the list could not be had (`error` says why). */
  models: ListedModel[];
  error?: string;
  fetchedAt: string;
}

export interface ModelListerOptions {
  ttlMs?: number;
  failureTtlMs?: number;
  list?: (config: ListConfig) => Promise<ListedModel[]>;
  now?: () => number;
}

type ProviderEnv = Parameters<typeof resolveProvider>[0];

export const MODEL_LIST_TTL_MS = 2 * 60_000;
export const MODEL_LIST_FAILURE_TTL_MS = 15_000;

export function createModelLister(env: ProviderEnv, options: ModelListerOptions = {}) {
  const ttl = options.ttlMs ?? MODEL_LIST_TTL_MS;
  const failureTtl = options.failureTtlMs ?? MODEL_LIST_FAILURE_TTL_MS;
  const list = options.list ?? ((c: ListConfig) => listProviderModels(c));
  const now = options.now ?? Date.now;
  const cache = new Map<ProviderKind, { until: number; listing: Promise<ModelListing> }>();

  const fetchListing = async (kind: ProviderKind): Promise<ModelListing> => {
    const fetchedAt = new Date(now()).toISOString();
    const r = resolveProvider(env, { provider: kind });
    if (!r.ok) return { provider: kind, models: [], error: r.message, fetchedAt };
    try {
      const models = await list({ kind, apiKey: r.config.apiKey, baseURL: r.config.baseURL });
      return { provider: kind, models, fetchedAt };
    } catch (err) {
      const status = (err as { status?: number }).status;
      const why = status ? `the provider answered ${status}` : (err as Error).message;
      return {
        provider: kind,
        models: [],
        error: `The provider's model list could not be read (${why}); type a model name instead.`,
        fetchedAt,
      };
    }
  };

  return {
    /** The provider's models; at most one request to it at a time, then cached. */
    async list(kind: ProviderKind): Promise<ModelListing> {
      const hit = cache.get(kind);
      if (hit && hit.until > now()) return hit.listing;
      // The in-flight promise is cached too: pickers opening together share one request.
      const listing = fetchListing(kind);
      cache.set(kind, { until: Infinity, listing });
      const done = await listing;
      cache.set(kind, { until: now() + (done.error ? failureTtl : ttl), listing });
      return done;
    },
  };
}

export type ModelLister = ReturnType<typeof createModelLister>;
