// One client cannot freeze the server: the real server (port 0, SQLite) with a stamping provider,
// a share link's real WebSockets. One socket opening event subscriptions past its bound gets
// TOO_MANY_REQUESTS saying why; an address past its bound of viewer sockets gets 429 at the
// upgrade. Then a flood (every viewer socket an address may hold, each replaying a long
// session several times over, from a thread of its own) runs while another session's turn
// streams from the provider: that turn's tokens keep their pace and /api/health answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import WebSocket from "ws";
import { createTRPCClient, createWSClient, httpBatchLink, wsLink } from "@trpc/client";
import { testServerEnv } from "../testing/env";
import { startQuiver, type Quiver } from "../app";
import type { AppRouter } from "../api/root";
import type { SessionEvent } from "../protocol/events";
import { SOCKET_LIMITS } from "../http/socket-limits";

const root = join(import.meta.dirname, "..", "..");
const STORED = 10_000;
const TOKENS = 150;
const DELAY_MS = 10;
const SUBS_PER_FLOOD_SOCKET = 4;

// The flood's clients, in a thread of their own so the measuring client's clock is the server's.
const FLOOD = `
const { parentPort, workerData } = require("node:worker_threads");
const WebSocket = require("ws");
const { url, cookie, sessionId, sockets, subs } = workerData;
let received = 0, refused = 0, opened = 0;
const all = [];
for (let s = 0; s < sockets; s++) {
  const ws = new WebSocket(url, { headers: { cookie } });
  all.push(ws);
  ws.on("open", () => {
    opened++;
    for (let i = 1; i <= subs; i++) ws.send(JSON.stringify({ id: i, method: "subscription", params: { path: "turns.events", input: { sessionId, lastSeq: 0 } } }));
  });
  ws.on("message", () => { received++; });
  ws.on("unexpected-response", (_req, res) => { refused++; res.resume(); });
  ws.on("error", () => {});
}
setInterval(() => parentPort.postMessage({ received, refused, opened }), 100);
parentPort.on("message", () => { for (const ws of all) ws.terminate(); setTimeout(() => process.exit(0), 50); });
`;

async function until(check: () => boolean, ms = 15_000): Promise<void> {
  for (const end = Date.now() + ms; !check() && Date.now() < end;) await new Promise((r) => setTimeout(r, 50));
}

// A provider speaking Anthropic's stream: each text delta is the absolute time it was written.
const PROVIDER = `
const { parentPort, workerData } = require("node:worker_threads");
const http = require("node:http");
const { tokens, delayMs } = workerData;
const sse = (type, data) => "event: " + type + "\\ndata: " + JSON.stringify(Object.assign({ type }, data)) + "\\n\\n";
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(sse("message_start", { message: { id: "msg_1", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } }));
    res.write(sse("content_block_start", { index: 0, content_block: { type: "text", text: "" } }));
    let n = 0;
    const tick = () => {
      if (n++ < tokens) {
        res.write(sse("content_block_delta", { index: 0, delta: { type: "text_delta", text: (performance.timeOrigin + performance.now()).toFixed(1) + ";" } }));
        return setTimeout(tick, delayMs);
      }
      res.write(sse("content_block_stop", { index: 0 }));
      res.write(sse("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: tokens } }));
      res.end(sse("message_stop", {}));
    };
    tick();
  });
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage("http://127.0.0.1:" + server.address().port));
`;

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

describe("a flood of subscriptions", () => {
  let quiver: Quiver;
  let fake: Worker;
  let dataDir: string;
  let big: string;
  let measured: string;
  let cookie: string;
  let owner: ReturnType<typeof createTRPCClient<AppRouter>>;
  const wsUrl = (viewer: boolean) => `${quiver.url.replace("http", "ws")}/api/trpc${viewer ? "?shared=1" : ""}`;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "quiver-flood-"));
    // The provider on a thread of its own, writing on time however busy the server's thread is;
    // each token's text is the moment it was written, so its lateness is read off on arrival.
    fake = new Worker(PROVIDER, { eval: true, workerData: { tokens: TOKENS, delayMs: DELAY_MS } });
    const baseUrl = await new Promise<string>((resolve) => fake.once("message", resolve));
    const env = testServerEnv(dataDir, {
      QUIVER_PROVIDER: "anthropic",
      QUIVER_MODEL: "claude-test",
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: baseUrl,
    });
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
    owner = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });
    big = (await owner.sessions.create.mutate({ title: "long" })).id;
    measured = (await owner.sessions.create.mutate({ title: "measured" })).id;
    const { token } = await owner.shares.create.mutate({ sessionId: big });
    cookie = (await fetch(`${quiver.url}/share/${token}`, { redirect: "manual" })).headers
      .get("set-cookie")!
      .split(";")[0];
    const bodies = [];
    for (let i = 0; i < STORED; i++)
      bodies.push(
        quiver.services.hub.publish(big, {
          type: "text.delta",
          turnId: "t-long",
          text: `word ${i} of a long answer that goes on; `,
        }),
      );
    await Promise.all(bodies);
  }, 120_000);
  afterAll(async () => {
    await quiver?.stop();
    await fake?.terminate();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("refuses subscriptions past the bound of one socket with TOO_MANY_REQUESTS, and frees a place when one ends", async () => {
    const client = createWSClient({ url: wsUrl(false), WebSocket: WebSocket as never });
    const trpc = createTRPCClient<AppRouter>({ links: [wsLink({ client })] });
    try {
      const errors: { code?: string; message: string }[] = [];
      const subs = [];
      for (let i = 0; i < SOCKET_LIMITS.subscriptionsPerSocket + 3; i++) {
        subs.push(
          trpc.turns.events.subscribe(
            { sessionId: measured, lastSeq: 0 },
            {
              onError: (e) => errors.push({ code: (e as { data?: { code?: string } }).data?.code, message: e.message }),
            },
          ),
        );
      }
      await until(() => errors.length >= 3);
      await new Promise((r) => setTimeout(r, 300));
      expect(errors).toHaveLength(3);
      for (const e of errors) {
        expect(e.code).toBe("TOO_MANY_REQUESTS");
        expect(e.message).toMatch(/already follows 64 event subscriptions/);
      }
      subs[0].unsubscribe();
      await new Promise((r) => setTimeout(r, 500));
      let started = false;
      trpc.turns.events.subscribe(
        { sessionId: measured, lastSeq: 0 },
        { onStarted: () => (started = true), onError: (e) => errors.push({ message: e.message }) },
      );
      await until(() => started || errors.length > 3);
      expect(errors).toHaveLength(3);
    } finally {
      client.close();
    }
  });

  it("refuses a viewer's socket past the bound of its address with 429 and a reason", async () => {
    const held: WebSocket[] = [];
    try {
      for (let i = 0; i < SOCKET_LIMITS.viewerSocketsPerAddress; i++) {
        const ws = new WebSocket(wsUrl(true), { headers: { cookie } });
        held.push(ws);
        await new Promise((resolve, reject) =>
          ws.once("open", resolve).once("unexpected-response", () => reject(new Error(`socket ${i} refused`))),
        );
      }
      const extra = await new Promise<{ status: number; body: string }>((resolve) => {
        const ws = new WebSocket(wsUrl(true), { headers: { cookie } });
        ws.once("open", () => resolve({ status: 101, body: "" }));
        ws.once("unexpected-response", (_req, res) => {
          let body = "";
          res.on("data", (d) => (body += d));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        ws.on("error", () => {});
      });
      expect(extra.status).toBe(429);
      expect(extra.body).toMatch(/too many connections: share-link viewers at .* already holds 32 open/);
    } finally {
      for (const ws of held) ws.terminate();
      await new Promise((r) => setTimeout(r, 300));
    }
  });

  /** One turn of the measured session: how long each token took from the provider's write to the owner's socket. */
  async function turn(): Promise<number[]> {
    const client = createWSClient({ url: wsUrl(false), WebSocket: WebSocket as never });
    const trpc = createTRPCClient<AppRouter>({ links: [wsLink({ client })] });
    const last = await quiver.services.hub.lastSeq(measured);
    const arrivals: number[] = [];
    try {
      await new Promise<void>((resolve, reject) => {
        trpc.turns.events.subscribe(
          { sessionId: measured, lastSeq: last },
          {
            onData: (d) => {
              const ev = (d as { data: SessionEvent }).data;
              if (ev.type === "text.delta") {
                const now = performance.timeOrigin + performance.now();
                for (const stamp of ev.text.split(";")) if (stamp) arrivals.push(now - Number(stamp));
              }
              if (ev.type === "turn.finished") resolve();
            },
            onError: reject,
          },
        );
        owner.turns.send.mutate({ sessionId: measured, text: "go" }).catch(reject);
      });
    } finally {
      client.close();
    }
    return arrivals;
  }

  it("keeps another session's tokens on time and /api/health answering while every socket an address may hold replays a long session", async () => {
    const quietHealth: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t = performance.now();
      await (await fetch(`${quiver.url}/api/health`)).text();
      quietHealth.push(performance.now() - t);
    }
    const quiet = await turn();
    const flood = new Worker(FLOOD, {
      eval: true,
      workerData: {
        url: wsUrl(true),
        cookie,
        sessionId: big,
        sockets: SOCKET_LIMITS.viewerSocketsPerAddress,
        subs: SUBS_PER_FLOOD_SOCKET,
      },
    });
    let stats = { received: 0, refused: 0, opened: 0 };
    flood.on("message", (m) => (stats = m));
    const health: number[] = [];
    const loop = monitorEventLoopDelay({ resolution: 5 });
    let gcMax = 0;
    const gc = new PerformanceObserver((list) =>
      list.getEntries().forEach((e) => (gcMax = Math.max(gcMax, e.duration))),
    );
    gc.observe({ entryTypes: ["gc"] });
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const t = performance.now();
        const res = await fetch(`${quiver.url}/api/health`);
        await res.text();
        health.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      const until = Date.now() + 30_000;
      while (stats.received < 20_000 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      const before = stats.received;
      loop.enable();
      const loaded = await turn();
      loop.disable();
      gc.disconnect();
      const during = stats.received - before;
      polling = false;
      await poll;
      const figures = {
        quiet: { p50: pct(quiet, 50), p99: pct(quiet, 99), max: Math.max(...quiet) },
        flood: { p50: pct(loaded, 50), p99: pct(loaded, 99), max: Math.max(...loaded) },
        quietHealth: { p50: pct(quietHealth, 50), max: Math.max(...quietHealth) },
        health: { p50: pct(health, 50), max: Math.max(...health), polls: health.length },
        loopDelay: { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 },
        gcMaxPause: gcMax,
        floodSockets: stats.opened,
        replayedDuringTurn: during,
      };
      console.log(
        `[flood] ms, token provider-write to client (a token every ${DELAY_MS} ms): ${JSON.stringify(figures, (_k, v) => (typeof v === "number" ? Math.round(v * 10) / 10 : v))}`,
      );
      expect(stats.opened).toBe(SOCKET_LIMITS.viewerSocketsPerAddress);
      expect(during).toBeGreaterThan(1_000); // the flood was replaying throughout the turn
      expect(loaded.length).toBe(TOKENS);
      // What the flood added to a token's way through the server, at the 99th percentile.
      expect(pct(loaded, 99) - pct(quiet, 50)).toBeLessThan(250);
      expect(Math.max(...health)).toBeLessThan(1_000);
    } finally {
      polling = false;
      flood.postMessage("stop");
      await new Promise((r) => flood.once("exit", r));
    }
  }, 120_000);
});
