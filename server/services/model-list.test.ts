// The picker's model list against the fake provider over real HTTP, in both wire formats through
// the official SDKs: ids, names and whether each takes images (from the list, else from the
// name), the short cache, and the fallback to free text when the list cannot be read.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeProvider, type FakeProvider } from "../engine/fake-provider/server";
import { knownToTakeImages } from "../engine/providers/model-list";
import { createModelLister } from "./model-list";

let fake: FakeProvider;
beforeAll(async () => {
  fake = await startFakeProvider();
});
afterAll(() => fake.close());

const anthropicEnv = () => ({ ANTHROPIC_API_KEY: "fake", ANTHROPIC_BASE_URL: fake.anthropicBaseURL });
const openaiEnv = () => ({ OPENAI_BASE_URL: fake.openaiBaseURL });

describe.each([
  ["anthropic", anthropicEnv],
  ["openai", openaiEnv],
] as const)("the %s wire format", (kind, env) => {
  it("lists the provider's models with what the list says about images", async () => {
    fake.setModels([
      { id: "zeta-vision", name: "Zeta", images: true },
      { id: "alpha-text", name: "Alpha", images: false },
      { id: "claude-sonnet-4-5" },
      { id: "mystery-7b" },
    ]);
    const listing = await createModelLister(env()).list(kind);
    expect(listing.error).toBeUndefined();
    expect(listing.provider).toBe(kind);
    expect(listing.models.map((m) => [m.id, m.images])).toEqual([
      ["alpha-text", false],
      ["claude-sonnet-4-5", true], // not said: known by name
      ["mystery-7b", undefined],
      ["zeta-vision", true],
    ]);
    if (kind === "anthropic") expect(listing.models.find((m) => m.id === "zeta-vision")?.name).toBe("Zeta");
  });

  it("keeps a list for its TTL and asks again after it", async () => {
    fake.setModels([{ id: "first" }]);
    let clock = 1_000_000;
    const lister = createModelLister(env(), { ttlMs: 60_000, now: () => clock });
    const before = fake.modelLists();
    expect((await lister.list(kind)).models.map((m) => m.id)).toEqual(["first"]);
    fake.setModels([{ id: "second" }]);
    await Promise.all([lister.list(kind), lister.list(kind)]);
    expect((await lister.list(kind)).models.map((m) => m.id)).toEqual(["first"]);
    expect(fake.modelLists() - before).toBe(1);
    clock += 60_001;
    expect((await lister.list(kind)).models.map((m) => m.id)).toEqual(["second"]);
    expect(fake.modelLists() - before).toBe(2);
  });

  it("says the list failed, with no models, and tries again sooner than a list is kept", async () => {
    fake.setModels({ status: 503, message: "models are down" });
    let clock = 5_000_000;
    const lister = createModelLister(env(), { ttlMs: 60_000, failureTtlMs: 5_000, now: () => clock });
    const failed = await lister.list(kind);
    expect(failed.models).toEqual([]);
    expect(failed.error).toMatch(/could not be read \(the provider answered 503\); type a model name instead/);
    fake.setModels([{ id: "back" }]);
    clock += 5_001;
    const back = await lister.list(kind);
    expect(back.error).toBeUndefined();
    expect(back.models.map((m) => m.id)).toEqual(["back"]);
  });
});

it("says why when the provider is not configured, without asking anyone", async () => {
  const before = fake.modelLists();
  const listing = await createModelLister(openaiEnv()).list("anthropic");
  expect(listing.models).toEqual([]);
  expect(listing.error).toMatch(/ANTHROPIC_API_KEY is not set/);
  expect(fake.modelLists()).toBe(before);
});

it("falls back when nothing answers at the base URL", async () => {
  const gone = await startFakeProvider();
  const url = gone.openaiBaseURL;
  await gone.close();
  const listing = await createModelLister({ OPENAI_BASE_URL: url }).list("openai");
  expect(listing.models).toEqual([]);
  expect(listing.error).toMatch(/could not be read .*type a model name instead/);
});

it("knows which common models take images when a list does not say", () => {
  expect(knownToTakeImages("gpt-4o-mini")).toBe(true);
  expect(knownToTakeImages("openai/gpt-4.1")).toBe(true);
  expect(knownToTakeImages("claude-3-5-haiku-20241022")).toBe(true);
  expect(knownToTakeImages("o3-mini")).toBe(false);
  expect(knownToTakeImages("deepseek-chat")).toBe(false);
  expect(knownToTakeImages("qwen2.5-coder:7b")).toBeUndefined();
});
