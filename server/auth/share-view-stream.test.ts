// Secrets split across streamed pieces, against the real server (port 0, SQLite, no runner) and
// a share link's real WebSocket: every kind redact.ts knows, cut at every offset into 2 pieces
// and at every pair of offsets (every 6th first cut; every pair in process,
// redact-stream.test.ts) into 3, in a turn's text, its reasoning and
// a command's output. The viewer's joined text, live and replayed (lastSeq 0, folded and not,
// and a resume from inside a split key), never shows a secret and is the whole text redacted
// at once: everything else arrives, in order. The owner's stream is the text as written.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { createTRPCClient, createWSClient, httpBatchLink, wsLink } from "@trpc/client";
import { testServerEnv } from "../testing/env";
import { startQuiver, type Quiver } from "../app";
import type { AppRouter } from "../api/root";
import type { SessionEvent, SessionEventBody } from "../protocol/events";
import { redactText } from "./redact";
import { leaks, SECRET_CASES, splits } from "./secrets.testdata";

const root = join(import.meta.dirname, "..", "..");
type Kind = "text.delta" | "reasoning.delta" | "tool.progress";
const KINDS: Kind[] = ["text.delta", "reasoning.delta", "tool.progress"];
const LAST_TURN = "turn-tool.progress";

/** One turn per kind: every case, every split, one after another in a single stream. */
function turns(): { bodies: SessionEventBody[]; raw: Record<Kind, string> } {
  const bodies: SessionEventBody[] = [];
  const raw = {} as Record<Kind, string>;
  for (const kind of KINDS) {
    const turnId = `turn-${kind}`;
    bodies.push({ type: "turn.started", turnId });
    if (kind === "tool.progress")
      bodies.push({ type: "tool.started", turnId, callId: "call-1", name: "shell", input: {}, summary: "run" });
    let text = "";
    let n = 0;
    for (const c of SECRET_CASES) {
      for (const pieces of [...splits(c.text, 2), ...splits(c.text, 3, 6)]) {
        pieces[pieces.length - 1] += ` #${n++}\n`;
        for (const p of pieces)
          bodies.push(
            kind === "tool.progress" ? { type: kind, callId: "call-1", chunk: p } : { type: kind, turnId, text: p },
          );
        text += pieces.join("");
      }
    }
    raw[kind] = text;
    if (kind === "tool.progress")
      bodies.push({
        type: "tool.finished",
        callId: "call-1",
        status: "succeeded",
        output: "done",
        isError: false,
        truncated: false,
        durationMs: 1,
      });
    bodies.push({ type: "turn.finished", turnId, status: "completed" });
  }
  return { bodies, raw };
}

function streamTexts(events: SessionEvent[]): Record<Kind, string> {
  const out = { "text.delta": "", "reasoning.delta": "", "tool.progress": "" };
  for (const e of events) {
    if (e.type === "tool.progress") out[e.type] += e.chunk;
    else if (e.type === "text.delta" || e.type === "reasoning.delta") out[e.type] += e.text;
  }
  return out;
}

describe("secrets split across streamed pieces, to a share link's WebSocket", () => {
  let quiver: Quiver;
  let dataDir: string;
  let sessionId: string;
  let cookie: string;
  const { bodies, raw } = turns();
  let live: Promise<SessionEvent[]>;
  let owner: Promise<SessionEvent[]>;

  /** Subscribes (as a viewer, or the owner) and collects events up to the last turn's end. */
  function collect(viewer: boolean, input: { lastSeq: number; folded?: boolean }): Promise<SessionEvent[]> {
    const headers = viewer ? { cookie } : {};
    class Ws extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { headers });
      }
    }
    const client = createWSClient({
      url: `${quiver.url.replace("http", "ws")}/api/trpc${viewer ? "?shared=1" : ""}`,
      WebSocket: Ws as never,
    });
    const trpc = createTRPCClient<AppRouter>({ links: [wsLink({ client })] });
    const events: SessionEvent[] = [];
    return new Promise<SessionEvent[]>((resolve, reject) => {
      const sub = trpc.turns.events.subscribe(
        { sessionId, ...input },
        {
          onData: (d) => {
            const ev = (d as { data: SessionEvent }).data;
            events.push(ev);
            if (ev.type === "turn.finished" && ev.turnId === LAST_TURN) {
              sub.unsubscribe();
              client.close();
              resolve(events);
            }
          },
          onError: (err) => {
            client.close();
            reject(err);
          },
        },
      );
    });
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "quiver-split-"));
    const env = testServerEnv(dataDir);
    quiver = await startQuiver({ env, root, web: false, log: () => {} });
    const http = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${quiver.url}/api/trpc` })] });
    sessionId = (await http.sessions.create.mutate({ title: "split secrets" })).id;
    const { token } = await http.shares.create.mutate({ sessionId });
    cookie = (await fetch(`${quiver.url}/share/${token}`, { redirect: "manual" })).headers
      .get("set-cookie")!
      .split(";")[0];
    // The live viewer is subscribed before anything is published.
    live = collect(true, { lastSeq: 0 });
    await new Promise((r) => setTimeout(r, 300));
    await Promise.all(bodies.map((b) => quiver.services.hub.publish(sessionId, b)));
    owner = collect(false, { lastSeq: 0 });
  }, 120_000);
  afterAll(async () => {
    await quiver?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const check = (events: SessionEvent[], from = "") => {
    const texts = streamTexts(events);
    for (const kind of KINDS) {
      for (const c of SECRET_CASES) expect(leaks(texts[kind], c.secret, 8), `${c.kind} in ${kind}`).toBeUndefined();
      if (!from) expect(texts[kind], kind).toBe(redactText(raw[kind]));
    }
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
  };

  it(`sends the live stream redacted joined (${bodies.length} events)`, async () => {
    check(await live);
  }, 120_000);

  it("replays it redacted joined, event by event (lastSeq 0)", async () => {
    check(await collect(true, { lastSeq: 0 }));
  }, 120_000);

  it("replays it redacted joined, folded", async () => {
    const events = await collect(true, { lastSeq: 0, folded: true });
    expect(events.length).toBeLessThan(bodies.length / 10);
    check(events);
  }, 120_000);

  it("resumes from inside a split key without showing the rest of it", async () => {
    // The first piece of a 2-piece split of the PEM case that ends inside the key's body.
    const all = await owner;
    const inside = all.find(
      (e) =>
        e.type === "text.delta" &&
        e.text.includes("-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34Gkx") &&
        !e.text.includes("END"),
    )!;
    expect(inside).toBeDefined();
    const resumed = await collect(true, { lastSeq: inside.seq });
    expect(resumed[0].seq).toBeGreaterThan(inside.seq);
    check(resumed, "resume");
  }, 120_000);

  it("gives the owner the text as written", async () => {
    const texts = streamTexts(await owner);
    for (const kind of KINDS) expect(texts[kind]).toBe(raw[kind]);
  }, 120_000);
});
