// An engine suite's setup, shared: every database the tests run on crossed with both wire
// formats, and an engine over the test database, a fresh hub and the shared fake provider,
// made before each test and disposed of after it.
import { afterEach, beforeEach } from "vitest";
import { createEngine, type Engine, type EngineDeps } from "../engine/engine";
import { createEventHub, type EventHub } from "../hub/events";
import type { FakeProvider } from "../engine/fake-provider/server";
import type { ProviderKind } from "../engine/types";
import { testDatabases, type TestDb } from "./db";
import { fakeProviderEnv, fastRetries, testDispatcher } from "./engine";

/** [database, wire format] for describe.each: each database under test, both wire formats. */
export const engineCombos = () =>
  testDatabases().flatMap((db) => (["anthropic", "openai"] as ProviderKind[]).map((p) => [db, p] as const));

/** What a test engine is made of unless a suite says otherwise. */
export function engineDeps(
  t: Pick<TestDb, "db" | "rows">,
  hub: EventHub,
  kind: ProviderKind,
  fake: FakeProvider,
  extra: Partial<EngineDeps> = {},
): EngineDeps {
  return {
    db: t.db,
    rows: t.rows,
    hub,
    dispatcher: testDispatcher(),
    env: fakeProviderEnv(kind, fake),
    retry: fastRetries,
    systemPrompt: "SYSTEM",
    ...extra,
  };
}

/** A hub and an engine per test, with the defaults above. */
export function useEngine(
  t: { readonly current: TestDb },
  kind: ProviderKind,
  provider: { readonly current: FakeProvider },
): { readonly hub: EventHub; readonly engine: Engine } {
  let hub: EventHub | undefined;
  let engine: Engine | undefined;
  beforeEach(() => {
    hub = createEventHub(t.current.db, { url: t.current.url });
    engine = createEngine(engineDeps(t.current, hub, kind, provider.current));
  });
  afterEach(async () => {
    await engine?.dispose();
    await hub?.dispose();
  });
  return {
    get hub() {
      if (!hub) throw new Error("the hub is made before each test (use it inside one)");
      return hub;
    },
    get engine() {
      if (!engine) throw new Error("the engine is made before each test (use it inside one)");
      return engine;
    },
  };
}
