// Test-only: the fake provider a suite of engine tests shares (started once, its recorded
// requests cleared before each test, and every scripted step used up after it), and the
// environment that points a wire format at it.
import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";
import { startFakeProvider, type FakeProvider } from "./fake-provider/server";
import type { ProviderKind } from "./types";

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
