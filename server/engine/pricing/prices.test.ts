// The price table: lookups by the names providers list, dollars from a turn's usage with cache
// reads and writes at their own prices, and the operator's QUIVER_PRICES checked at boot.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EnvError, parseEnv } from "../../env";
import { BUILTIN_PRICES, costOf, priceOf, priceTable } from "./prices";

const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0, cacheWriteTokens = 0) => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens,
});

describe("price table", () => {
  it("finds a model by its name, its dated snapshot and a router's vendor prefix", () => {
    const table = priceTable();
    expect(priceOf("claude-sonnet-4-5", table)).toEqual(BUILTIN_PRICES["claude-sonnet-4-5"]);
    expect(priceOf("claude-sonnet-4-5-20250929", table)).toEqual(BUILTIN_PRICES["claude-sonnet-4-5"]);
    expect(priceOf("gpt-4o-2024-08-06", table)).toEqual(BUILTIN_PRICES["gpt-4o"]);
    expect(priceOf("openai/gpt-4.1-mini", table)).toEqual(BUILTIN_PRICES["gpt-4.1-mini"]);
    expect(priceOf("llama3.1:8b", table)).toBeUndefined();
    // A longer name is not a shorter one's: gpt-4.1-nano is not priced as gpt-4.1.
    expect(priceOf("gpt-4.1-nano", table)?.input).toBe(0.1);
  });

  it("prices input, output, cache reads and cache writes each at its own rate", () => {
    const price = BUILTIN_PRICES["claude-sonnet-4-5"]; // 3 / 15 / 0.30 / 3.75 per million
    expect(costOf(usage(1_000_000, 0), price)).toBeCloseTo(3, 10);
    expect(costOf(usage(0, 1_000_000), price)).toBeCloseTo(15, 10);
    expect(costOf(usage(0, 0, 1_000_000), price)).toBeCloseTo(0.3, 10);
    expect(costOf(usage(0, 0, 0, 1_000_000), price)).toBeCloseTo(3.75, 10);
    expect(costOf(usage(2_000, 500, 10_000, 1_000), price)).toBeCloseTo(0.006 + 0.0075 + 0.003 + 0.00375, 10);
    expect(costOf(usage(1, 1), undefined)).toBeUndefined();
  });

  it("charges cache tokens at the input price when a table leaves their prices out", () => {
    expect(costOf(usage(0, 0, 1_000_000, 1_000_000), { input: 2, output: 4 })).toBeCloseTo(4, 10);
  });

  it("lets the operator's entries replace built-in ones and add models", () => {
    const table = priceTable({ "claude-sonnet-4-5": { input: 1, output: 2 }, "my-local": { input: 0, output: 0 } });
    expect(priceOf("claude-sonnet-4-5-20250929", table)).toEqual({ input: 1, output: 2 });
    expect(priceOf("my-local", table)).toEqual({ input: 0, output: 0 });
    expect(priceOf("gpt-4.1", table)).toEqual(BUILTIN_PRICES["gpt-4.1"]);
  });
});

describe("QUIVER_PRICES", () => {
  const base = { QUIVER_DATA_DIR: "/tmp/q" };

  it("takes the JSON itself", () => {
    const env = parseEnv({
      ...base,
      QUIVER_PRICES: '{ "fake-model": { "input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75 } }',
    });
    expect(env.QUIVER_PRICES).toEqual({ "fake-model": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } });
  });

  it("takes a JSON file's path", () => {
    const dir = mkdtempSync(join(tmpdir(), "quiver-prices-"));
    writeFileSync(join(dir, "prices.json"), JSON.stringify({ "qwen3-coder": { input: 0.2, output: 0.8 } }));
    expect(parseEnv({ ...base, QUIVER_PRICES: join(dir, "prices.json") }).QUIVER_PRICES).toEqual({
      "qwen3-coder": { input: 0.2, output: 0.8 },
    });
  });

  it("is optional", () => {
    expect(parseEnv(base).QUIVER_PRICES).toBeUndefined();
  });

  it.each([
    ['{ "m": { "input": -1, "output": 2 } }', /Invalid QUIVER_PRICES: m\.input: .*>=\s*0/],
    ['{ "m": { "input": 1 } }', /Invalid QUIVER_PRICES: m\.output:/],
    ['{ "m": { "input": 1, "output": 2, "cacheHit": 1 } }', /Invalid QUIVER_PRICES: m: .*cacheHit/],
    ['{ "m": { "input": "3", "output": 2 } }', /Invalid QUIVER_PRICES: m\.input:/],
    ["{ not json", /Invalid QUIVER_PRICES: not JSON/],
    ["/no/such/prices.json", /Invalid QUIVER_PRICES: cannot read the price file \/no\/such\/prices\.json: ENOENT/],
  ])("stops the start on a bad table: %s", (value, message) => {
    expect(() => parseEnv({ ...base, QUIVER_PRICES: value })).toThrow(EnvError);
    expect(() => parseEnv({ ...base, QUIVER_PRICES: value })).toThrow(message);
  });
});
