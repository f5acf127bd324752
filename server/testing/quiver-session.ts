// Tests of tools that talk to the person (todo_write, ask_user): a real Quiver server (tRPC over
// HTTP and WebSocket, engine, pipeline, runner) against the fake provider on either wire format,
// and a follower that collects a session's events until a condition holds.
import { afterAll, beforeAll } from "vitest";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "../env";
import { startQuiver, type Quiver } from "../app";
import type { SessionEvent } from "../protocol/events";
import { startFakeProvider, type FakeProvider, type FakeProviderOptions } from "../engine/fake-provider/server";
import type { DbProvider } from "../db";
import { createTestDb, testDatabases } from "./db";
import { trpcClients, type TrpcClient, type TrpcSocket } from "./trpc";

export type WireFormat = "anthropic" | "openai";
export type Client = TrpcClient;

/** Each wire format on each test database (PostgreSQL when it answers, see ./db.ts). */
export const formatsAndDatabases = (): [WireFormat, DbProvider][] =>
  testDatabases().flatMap((db) => (["anthropic", "openai"] as const).map((f): [WireFormat, DbProvider] => [f, db]));

/** `fake`: the fake provider's start options (a script to play, looping), else an empty queue. */
export function useQuiverSession(
  format: WireFormat,
  prefix: string,
  database: DbProvider = "sqlite",
  fake: FakeProviderOptions = {},
) {
  const ctx = {
    quiver: undefined as unknown as Quiver,
    fake: undefined as unknown as FakeProvider,
    client: undefined as unknown as Client,
    dataDir: "",
  };
  let ws: TrpcSocket | undefined;
  let pgDb: Awaited<ReturnType<typeof createTestDb>> | undefined;
  beforeAll(async () => {
    // SQLite: the server's own file in its data folder; PostgreSQL: a fresh database.
    if (database === "postgresql") pgDb = await createTestDb("postgresql");
    ctx.fake = await startFakeProvider(fake);
    ctx.dataDir = mkdtempSync(join(tmpdir(), `quiver-${prefix}-`));
    mkdirSync(join(ctx.dataDir, "workspace"), { recursive: true });
    const model =
      format === "anthropic"
        ? {
            QUIVER_PROVIDER: "anthropic",
            QUIVER_MODEL: "claude-test",
            ANTHROPIC_API_KEY: "test-key",
            ANTHROPIC_BASE_URL: ctx.fake.anthropicBaseURL,
          }
        : {
            QUIVER_PROVIDER: "openai",
            QUIVER_MODEL: "gpt-test",
            OPENAI_API_KEY: "test-key",
            OPENAI_BASE_URL: ctx.fake.openaiBaseURL,
          };
    const env = parseEnv({
      PORT: "0",
      QUIVER_DATA_DIR: ctx.dataDir,
      QUIVER_LOG_LEVEL: "warn",
      ...(pgDb ? { DATABASE_URL: pgDb.url } : {}),
      ...model,
    });
    ctx.quiver = await startQuiver({ env, root: join(import.meta.dirname, "../.."), web: false, log: () => {} });
    ({ ws, client: ctx.client } = trpcClients(ctx.quiver.url));
  }, 90_000);
  afterAll(async () => {
    ws?.close();
    await ctx.quiver?.stop();
    await ctx.fake?.close();
    await pgDb?.dispose();
    if (ctx.dataDir) rmSync(ctx.dataDir, { recursive: true, force: true });
  });
  return ctx;
}

/** The session's events from `lastSeq` until `until` holds; `onEvent` may act on each one. A minute
 *  by default: a loaded two-core CI machine has taken over half a minute for one scripted turn. */
export function follow(
  client: Client,
  sessionId: string,
  until: (ev: SessionEvent, all: SessionEvent[]) => boolean,
  opts: { lastSeq?: number; onEvent?(ev: SessionEvent): void; timeoutMs?: number } = {},
): Promise<SessionEvent[]> {
  const seen: SessionEvent[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.unsubscribe();
      reject(new Error(`timed out; saw ${seen.map((e) => e.type).join(", ")}`));
    }, opts.timeoutMs ?? 60_000);
    const sub = client.turns.events.subscribe(
      { sessionId, lastSeq: opts.lastSeq ?? 0 },
      {
        onData: (t) => {
          const ev = (t as { data: SessionEvent }).data;
          seen.push(ev);
          opts.onEvent?.(ev);
          if (until(ev, seen)) {
            clearTimeout(timer);
            sub.unsubscribe();
            resolve(seen);
          }
        },
        onError: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      },
    );
  });
}

export const finishedTurns = (all: SessionEvent[]) => all.filter((e) => e.type === "turn.finished").length;
