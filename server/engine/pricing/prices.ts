// What a model's tokens cost, in US dollars per million tokens: a built-in table of known
// models (their list prices when this table was written) and the operator's own table from
// QUIVER_PRICES (env.ts), whose entries replace the built-in ones of the same name. A model in
// neither is "price unknown": its tokens are shown, never a guessed dollar figure.
import { z } from "zod";
import type { Usage } from "../../protocol/events";

/** Per million tokens. Cache prices default to the input price when a table leaves them out. */
export const ModelPrice = z
  .object({
    input: z.number().nonnegative(),
    output: z.number().nonnegative(),
    cacheRead: z.number().nonnegative().optional(),
    cacheWrite: z.number().nonnegative().optional(),
  })
  .strict();
export type ModelPrice = z.infer<typeof ModelPrice>;

export const PriceTable = z.record(z.string().trim().min(1, "a model name must not be empty"), ModelPrice);
export type PriceTable = z.infer<typeof PriceTable>;

const anthropic = (input: number, output: number): ModelPrice => ({
  input,
  output,
  cacheRead: input / 10,
  cacheWrite: input * 1.25,
});
// OpenAI bills cached input at a discount and writes nothing extra.
const openai = (input: number, output: number, cacheRead: number): ModelPrice => ({
  input,
  output,
  cacheRead,
  cacheWrite: input,
});

export const BUILTIN_PRICES: PriceTable = {
  "claude-opus-4-5": anthropic(5, 25),
  "claude-opus-4-1": anthropic(15, 75),
  "claude-opus-4-0": anthropic(15, 75),
  "claude-opus-4": anthropic(15, 75),
  "claude-sonnet-4-5": anthropic(3, 15),
  "claude-sonnet-4-0": anthropic(3, 15),
  "claude-sonnet-4": anthropic(3, 15),
  "claude-3-7-sonnet": anthropic(3, 15),
  "claude-3-5-sonnet": anthropic(3, 15),
  "claude-haiku-4-5": anthropic(1, 5),
  "claude-3-5-haiku": anthropic(0.8, 4),
  "claude-3-haiku": anthropic(0.25, 1.25),
  "gpt-5": openai(1.25, 10, 0.125),
  "gpt-5-mini": openai(0.25, 2, 0.025),
  "gpt-5-nano": openai(0.05, 0.4, 0.005),
  "gpt-4.1": openai(2, 8, 0.5),
  "gpt-4.1-mini": openai(0.4, 1.6, 0.1),
  "gpt-4.1-nano": openai(0.1, 0.4, 0.025),
  "gpt-4o": openai(2.5, 10, 1.25),
  "gpt-4o-mini": openai(0.15, 0.6, 0.075),
  o3: openai(2, 8, 0.5),
  "o4-mini": openai(1.1, 4.4, 0.275),
  "deepseek-chat": openai(0.28, 0.42, 0.028),
  "deepseek-reasoner": openai(0.28, 0.42, 0.028),
};

/** The built-in table with the operator's entries over it. */
export function priceTable(overrides: PriceTable = {}): PriceTable {
  return { ...BUILTIN_PRICES, ...overrides };
}

/**
 * A model's price: its exact name, else the name without a router's vendor prefix
 * ("anthropic/…" on OpenRouter) or a release date ("…-20250929", "…-2024-08-06"), since
 * providers list dated snapshots of the same model at the same price.
 */
export function priceOf(model: string, table: PriceTable): ModelPrice | undefined {
  const names = new Set<string>([model]);
  const bare = model.includes("/") ? model.slice(model.lastIndexOf("/") + 1) : model;
  names.add(bare);
  for (const n of [...names]) names.add(n.replace(/-(\d{8}|\d{4}-\d{2}-\d{2})$/, "").replace(/-latest$/, ""));
  for (const n of names) if (Object.hasOwn(table, n)) return table[n];
  return undefined;
}

/** Dollars for `usage` at `price`; undefined when the price is unknown. */
export function costOf(usage: Usage, price: ModelPrice | undefined): number | undefined {
  if (!price) return undefined;
  const perToken = (p: number) => p / 1_000_000;
  return (
    usage.inputTokens * perToken(price.input) +
    usage.outputTokens * perToken(price.output) +
    usage.cacheReadTokens * perToken(price.cacheRead ?? price.input) +
    usage.cacheWriteTokens * perToken(price.cacheWrite ?? price.input)
  );
}
