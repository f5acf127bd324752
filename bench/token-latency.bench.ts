// Added latency per streamed token: from the moment the fake provider writes a token to the
// moment a client subscribed over tRPC WebSocket receives it as a text.delta event (through
// the SDK adapter, forged-call filter, engine, hub with its database write, and tRPC), against
// the same tokens read straight from the fake provider by the SDK client. 1 and 50 concurrent
// sessions (started spread over one token interval), both wire formats, on SQLite (and
// PostgreSQL when it answers).
//   npm run bench -- token-latency
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import pg from "pg";
import WebSocket, { WebSocketServer } from "ws";
import { createTRPCClient, createWSClient, wsLink } from "@trpc/client";
import { applyWSSHandler } from "@trpc/server/adapters/ws";
import { openDb, type DbHandle } from "../server/db";
import { createEventHub } from "../server/hub/events";
import { seedSession } from "../server/hub/testing";
import { createEngine } from "../server/engine/engine";
import { createAdapter } from "../server/engine/providers/index";
import { startFakeProvider, type FakeProvider } from "../server/engine/fake-provider/server";
import { fakeConfig, testDispatcher } from "../server/engine/testing";
import type { ProviderKind } from "../server/engine/types";
import { createSessionService } from "../server/services/sessions";
import type { Services } from "../server/services/types";
import { appRouter, type AppRouter } from "../server/api/root";
import { goal, percentile, printTable, ratio } from "./lib";

const TOKENS = 120;
const DELAY_MS = 15;
const token = /s\d{2}t\d{4}/g;
const sent = new Map<string, number>();

/** Each session's reply is its own tokens, so a token names the session and its position. */
function reply(tag: string) {
  const text = Array.from({ length: TOKENS }, (_, i) => `${tag}t${String(i).padStart(4, "0")} `).join("");
  return { blocks: [{ type: "text" as const, text }], deltaChars: 9, delayMs: DELAY_MS };
}

// In-process fake provider (a worker thread was tried: on 2 shared cores it took the CPU the
// measured loop needs and made both columns noisier).
const fake: FakeProvider = await startFakeProvider({
  respond: (req) => reply(/bench (s\d{2})/.exec(req.raw)?.[1] ?? "s99"),
  onWrite: (_i, chunk) => {
    const now = performance.now();
    for (const m of chunk.toString("utf8").matchAll(token)) sent.set(m[0], now);
  },
});

/** Sessions start spread over one token interval: real streams are not phase-locked. */
const stagger = (s: number, sessions: number) => new Promise((r) => setTimeout(r, (s * DELAY_MS) / sessions));

const record = (out: number[], text: string) => {
  const now = performance.now();
  for (const m of text.matchAll(token)) {
    const at = sent.get(m[0]);
    if (at !== undefined) out.push(now - at);
  }
};

async function direct(kind: ProviderKind, sessions: number): Promise<number[]> {
  sent.clear();
  const out: number[] = [];
  const adapter = createAdapter(fakeConfig(kind, fake));
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      await stagger(s, sessions);
      const spec = { system: "S", tools: [], messages: [{ role: "user" as const, content: [{ type: "text" as const, text: `bench s${String(s).padStart(2, "0")}` }] }] };
      for await (const ev of adapter.stream(spec, new AbortController().signal)) if (ev.type === "text") record(out, ev.text);
    }),
  );
  return out;
}

async function viaEngine(handle: DbHandle, kind: ProviderKind, sessions: number): Promise<number[]> {
  const { db } = handle;
  const hub = createEventHub(db);
  const env = kind === "anthropic" ? { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.anthropicBaseURL } : { OPENAI_API_KEY: "k", OPENAI_BASE_URL: fake.openaiBaseURL };
  const engine = createEngine({ db, hub, dispatcher: testDispatcher(), env: { QUIVER_PROVIDER: kind, ...env }, systemPrompt: "S" });
  const seeded = await Promise.all(Array.from({ length: sessions }, () => seedSession(db)));
  const actor = { userId: seeded[0].userId, orgId: seeded[0].orgId, role: "owner" as const };
  // Every session belongs to the first seeded user's org for the access check.
  await db.session.updateMany({ where: { id: { in: seeded.map((s) => s.sessionId) } }, data: { orgId: actor.orgId, ownerId: actor.userId } });
  const services = { db, dbProvider: handle.provider, sessions: createSessionService(db), engine, hub } as unknown as Services;
  const http = createServer();
  const wss = new WebSocketServer({ server: http });
  const handler = applyWSSHandler({ wss, router: appRouter, createContext: () => ({ services, actor }) });
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}`;
  sent.clear();
  const out: number[] = [];
  const sockets: ReturnType<typeof createWSClient>[] = [];
  await Promise.all(
    seeded.map(
      ({ sessionId }, s) =>
        new Promise<void>((resolve, reject) => {
          const ws = createWSClient({ url, WebSocket: WebSocket as never });
          sockets.push(ws);
          const client = createTRPCClient<AppRouter>({ links: [wsLink({ client: ws })] });
          const sub = client.turns.events.subscribe(
            { sessionId },
            {
              onStarted: () => void stagger(s, sessions).then(() => client.turns.send.mutate({ sessionId, text: `bench s${String(s).padStart(2, "0")}` })).catch(reject),
              onData: ({ data }) => {
                if (data.type === "text.delta") record(out, data.text);
                if (data.type === "turn.finished") {
                  sub.unsubscribe();
                  resolve();
                }
              },
              onError: reject,
            },
          );
        }),
    ),
  );
  for (const ws of sockets) ws.close();
  handler.broadcastReconnectNotification();
  wss.close();
  await new Promise((r) => http.close(r));
  await engine.dispose();
  await hub.dispose();
  return out;
}

async function postgres(): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const admin = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";
  const name = `quiver_bench_${process.pid}`;
  const c = new pg.Client({ connectionString: admin });
  try {
    await c.connect();
    await c.query(`CREATE DATABASE ${name}`);
    await c.end();
  } catch {
    return undefined;
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const d = new pg.Client({ connectionString: admin });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), "quiver-bench-"));
const dbs: { name: string; handle: DbHandle; drop?: () => Promise<void> }[] = [{ name: "sqlite", handle: await openDb(`file:${join(dir, "bench.db")}`) }];
const pgdb = await postgres();
if (pgdb) dbs.push({ name: "postgresql", handle: await openDb(pgdb.url), drop: pgdb.drop });

const rows: (string | number)[][] = [];
const sorted = (xs: number[]) => Float64Array.from(xs).sort();
for (const { name, handle } of dbs) {
  await viaEngine(handle, "anthropic", 2); // warm-up: JIT, connections, prepared statements
  await direct("anthropic", 2);
  for (const kind of ["anthropic", "openai"] as ProviderKind[]) {
    for (const sessions of [1, 50]) {
      const d = sorted(await direct(kind, sessions));
      const lag = monitorEventLoopDelay({ resolution: 1 });
      lag.enable();
      const v = sorted(await viaEngine(handle, kind, sessions));
      lag.disable();
      if (process.env.BENCH_VERBOSE) console.log(`${name} ${kind} x${sessions}: event-loop delay p50 ${(lag.percentile(50) / 1e6).toFixed(2)} ms, p99 ${(lag.percentile(99) / 1e6).toFixed(2)} ms, max ${(lag.max / 1e6).toFixed(1)} ms`);
      const [d50, d99, v50, v99] = [percentile(d, 50), percentile(d, 99), percentile(v, 50), percentile(v, 99)];
      const label = `${name} ${kind} ×${sessions}`;
      rows.push([label, v.length, d50, v50, v50 - d50, ratio(v50, d50), d99, v99, v99 - d99, ratio(v99, d99)]);
      goal(`${label} added p50 < 0.5 ms`, v50 - d50 < 0.5, `${(v50 - d50).toFixed(3)} ms`);
      goal(`${label} added p99 < 2 ms`, v99 - d99 < 2, `${(v99 - d99).toFixed(3)} ms`);
    }
  }
}
printTable(
  `Token latency, fake provider → client (ms; ${TOKENS} tokens per session, one every ${DELAY_MS} ms)`,
  ["case", { title: "tokens", digits: 0 }, { title: "direct p50", digits: 3 }, { title: "engine p50", digits: 3 }, { title: "added p50", digits: 3 }, "p50 ratio", { title: "direct p99", digits: 3 }, { title: "engine p99", digits: 3 }, { title: "added p99", digits: 3 }, "p99 ratio"],
  rows,
);

for (const d of dbs) {
  await d.handle.close();
  await d.drop?.();
}
rmSync(dir, { recursive: true, force: true });
await fake.close();
