// Calls, not subscriptions: one share-link viewer's WebSocket message carrying a pile of heavy
// reads (`turns.earlier` of a whole long session) must neither freeze /api/health nor be run all
// at once. The real server (port 0, SQLite), a real share link and socket; then the gate alone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { testServerEnv } from "../testing/env";
import { startQuiver, type Quiver } from "../app";
import type { AppRouter } from "../api/root";
import { CALL_LIMITS, createCallLimits } from "./call-limits";

const root = join(import.meta.dirname, "..", "..");
const TURNS = 100;
const DELTAS = 50;
const CALLS = 150;

describe("a viewer's pile of calls on one socket", () => {
  let quiver: Quiver;
  let dataDir: string;
  let session: string;
  let cookie: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "quiver-calls-"));
    const env = testServerEnv(dataDir, {
      QUIVER_PROVIDER: "anthropic",
      QUIVER_MODEL: "m",
      ANTHROPIC_API_KEY: "k",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
    });
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
    const owner = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });
    session = (await owner.sessions.create.mutate({ title: "long" })).id;
    const { token } = await owner.shares.create.mutate({ sessionId: session });
    cookie = (await fetch(`${quiver.url}/share/${token}`, { redirect: "manual" })).headers
      .get("set-cookie")!
      .split(";")[0];
    const hub = quiver.services.hub;
    const writes: Promise<unknown>[] = [];
    for (let t = 0; t < TURNS; t++) {
      writes.push(hub.publish(session, { type: "turn.started", turnId: `t${t}` }));
      for (let i = 0; i < DELTAS; i++)
        writes.push(
          hub.publish(session, {
            type: "text.delta",
            turnId: `t${t}`,
            text: `word ${i} of a long answer that goes on; `,
          }),
        );
      writes.push(hub.publish(session, { type: "turn.finished", turnId: `t${t}`, status: "completed" }));
    }
    await Promise.all(writes);
  }, 120_000);
  afterAll(async () => {
    await quiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("runs a few at a time, refuses past the waiting bound with TOO_MANY_REQUESTS, and /api/health keeps answering", async () => {
    const ws = new WebSocket(`${quiver.url.replace("http", "ws")}/api/trpc?shared=1`, { headers: { cookie } });
    await new Promise((resolve, reject) => ws.once("open", resolve).once("unexpected-response", reject));
    const answers: { id: number; error?: { message: string; data?: { code?: string } } }[] = [];
    ws.on("message", (d: Buffer) => {
      const text = d.toString();
      if (text === "PING") return ws.send("PONG");
      const m = JSON.parse(text);
      for (const x of Array.isArray(m) ? m : [m]) answers.push(x);
    });
    try {
      const batch = Array.from({ length: CALLS }, (_, i) => ({
        id: i + 1,
        method: "query",
        params: { path: "turns.earlier", input: { sessionId: session, beforeSeq: 1_000_000, turns: 1_000 } },
      }));
      ws.send(JSON.stringify(batch));
      const health: number[] = [];
      const end = Date.now() + 100_000;
      while (answers.length < CALLS && Date.now() < end) {
        const t = performance.now();
        await (await fetch(`${quiver.url}/api/health`)).text();
        health.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 100));
      }
      const refused = answers.filter((a) => a.error);
      const served = answers.filter((a) => !a.error);
      console.log(
        `[calls] ${served.length} served, ${refused.length} refused, /api/health max ${Math.round(Math.max(...health))} ms over ${health.length} polls`,
      );
      expect(answers).toHaveLength(CALLS);
      expect(served).toHaveLength(CALL_LIMITS.viewer.running + CALL_LIMITS.viewer.waiting);
      for (const r of refused) {
        expect(r.error!.data?.code).toBe("TOO_MANY_REQUESTS");
        expect(r.error!.message).toMatch(/share link's viewers already have 2 calls running and 64 waiting/);
      }
      expect(Math.max(...health)).toBeLessThan(1_500);
    } finally {
      ws.terminate();
    }
  }, 150_000);
});

describe("the gate", () => {
  const later = () => {
    let open!: () => void;
    const p = new Promise<void>((r) => (open = r));
    return { p, open };
  };

  it("runs at most `running` at once, in order, and gives a place back when a waiting caller leaves", async () => {
    const limits = createCallLimits({ viewer: { running: 2, waiting: 2 }, person: { running: 1, waiting: 0 } });
    const viewer = { kind: "viewer" as const, linkId: "l" };
    const started: number[] = [];
    const gates = [later(), later(), later(), later()];
    const abort = new AbortController();
    const calls = gates.map((g, i) =>
      limits.run(viewer, async () => (started.push(i), await g.p, i), i === 2 ? abort.signal : undefined),
    );
    await new Promise((r) => setTimeout(r, 10));
    expect(started).toEqual([0, 1]);
    expect(limits.size(viewer)).toEqual({ running: 2, waiting: 2 });
    await expect(limits.run(viewer, async () => 9)).rejects.toMatchObject({ code: "TOO_MANY_REQUESTS" });
    abort.abort();
    await expect(calls[2]).rejects.toMatchObject({ code: "CLIENT_CLOSED_REQUEST" });
    gates[0].open();
    await calls[0];
    await new Promise((r) => setTimeout(r, 10));
    expect(started).toEqual([0, 1, 3]);
    gates[1].open();
    gates[3].open();
    await Promise.all([calls[1], calls[3]]);
    expect(limits.size(viewer)).toEqual({ running: 0, waiting: 0 });
    // A person is counted apart from a link's viewers.
    await expect(limits.run({ kind: "person", id: "p" }, async () => 1)).resolves.toBe(1);
  });
});
