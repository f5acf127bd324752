// Child process of the token-latency benchmark: the clients, in one process of their own like
// browsers. Three ways to get the same tokens: straight from the fake provider through the
// provider SDK (the baseline: what the server itself does to read the model), through the bare
// relay (relay.ts: the floor of one more process in the path), or as a user does, over tRPC
// WebSocket from the server (one socket per session, subscribe, then send). Also idle IDE
// pages: sockets that follow a session and wait (idle-subscribers benchmark).
// Each token's arrival is stamped with the monotonic clock the fake provider stamps its writes with.
import WebSocket from "ws";
import { createTRPCClient, createWSClient, wsLink } from "@trpc/client";
import { createAdapter } from "../../../server/engine/providers/index";
import type { AppRouter } from "../../../server/api/root";
import { prompt, serve, TOKEN } from "./ipc";

type Times = [string, number][];

const record = (out: Times, text: string) => {
  const now = Number(process.hrtime.bigint());
  for (const m of text.matchAll(TOKEN)) out.push([m[0], now]);
};

/** Session s starts at s/sessions of `ms`: independent users are not phase-locked. */
const stagger = (s: number, sessions: number, ms: number) => new Promise((r) => setTimeout(r, (s * ms) / sessions));

async function direct(
  kind: "anthropic" | "openai",
  sessions: number,
  rounds: number,
  baseURL: string,
  staggerMs: number,
): Promise<Times> {
  const out: Times = [];
  const adapter = createAdapter({ kind, model: "fake", apiKey: "k", baseURL });
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      await stagger(s, sessions, staggerMs);
      for (let r = 0; r < rounds; r++) {
        const spec = {
          system: "S",
          tools: [],
          messages: [{ role: "user" as const, content: [{ type: "text" as const, text: prompt(s, r) }] }],
        };
        for await (const ev of adapter.stream(spec, new AbortController().signal))
          if (ev.type === "text") record(out, ev.text);
      }
    }),
  );
  return out;
}

async function viaRelay(
  url: string,
  kind: "anthropic" | "openai",
  sessions: number,
  rounds: number,
  staggerMs: number,
): Promise<Times> {
  const out: Times = [];
  const sockets: WebSocket[] = [];
  try {
    await Promise.all(
      Array.from(
        { length: sessions },
        (_, s) =>
          new Promise<void>((resolve, reject) => {
            const ws = new WebSocket(url);
            sockets.push(ws);
            let round = 0;
            const send = () => ws.send(JSON.stringify({ kind, prompt: prompt(s, round) }));
            ws.on("open", () => void stagger(s, sessions, staggerMs).then(send));
            ws.on("message", (raw) => {
              const data = JSON.parse(String(raw)) as { type: string; text?: string };
              if (data.type === "text.delta") record(out, data.text!);
              else if (++round < rounds) send();
              else resolve();
            });
            ws.on("error", reject);
            ws.on("close", (code, reason) => reject(new Error(`relay closed the socket: ${code} ${String(reason)}`)));
          }),
      ),
    );
  } finally {
    for (const ws of sockets) ws.close();
  }
  return out;
}

async function viaServer(url: string, sessionIds: string[], rounds: number, staggerMs: number): Promise<Times> {
  const out: Times = [];
  const sockets: ReturnType<typeof createWSClient>[] = [];
  try {
    await Promise.all(
      sessionIds.map(
        (sessionId, s) =>
          new Promise<void>((resolve, reject) => {
            const ws = createWSClient({ url, WebSocket: WebSocket as never });
            sockets.push(ws);
            const client = createTRPCClient<AppRouter>({ links: [wsLink({ client: ws })] });
            let round = 0;
            let begun = false;
            const send = () => void client.turns.send.mutate({ sessionId, text: prompt(s, round) }).catch(reject);
            const sub = client.turns.events.subscribe(
              { sessionId },
              {
                // Once: a socket the server dropped (a keep-alive missed on a starved machine)
                // subscribes again after its last event, and the turn it began goes on.
                onStarted: () => {
                  if (begun) return;
                  begun = true;
                  void stagger(s, sessionIds.length, staggerMs).then(send);
                },
                onData: ({ data }) => {
                  if (data.type === "text.delta") record(out, data.text);
                  if (data.type !== "turn.finished") return;
                  // The user's next message, as soon as the answer is complete.
                  if (++round < rounds) return send();
                  sub.unsubscribe();
                  resolve();
                },
                onError: reject,
              },
            );
          }),
      ),
    );
  } finally {
    for (const ws of sockets) ws.close();
  }
  return out;
}

/** Idle IDE pages (the idle-subscribers benchmark): one socket and one subscription each. */
const idlers: ReturnType<typeof createWSClient>[] = [];

async function idle(url: string, sessionIds: string[]): Promise<Times> {
  // Opened a hundred at a time: a thousand handshakes at once would be a benchmark of their own.
  for (let i = 0; i < sessionIds.length; i += 100) {
    await Promise.all(
      sessionIds.slice(i, i + 100).map(
        (sessionId) =>
          new Promise<void>((resolve, reject) => {
            const ws = createWSClient({ url, WebSocket: WebSocket as never });
            idlers.push(ws);
            const client = createTRPCClient<AppRouter>({ links: [wsLink({ client: ws })] });
            client.turns.events.subscribe({ sessionId, folded: true }, { onStarted: () => resolve(), onError: reject });
          }),
      ),
    );
  }
  return [];
}

async function timed(run: () => Promise<Times>) {
  const cpu = process.cpuUsage();
  const times = await run();
  const used = process.cpuUsage(cpu);
  return { type: "times" as const, times, cpuMs: (used.user + used.system) / 1000 };
}

if (process.send) {
  serve(
    async (req) => {
      switch (req.type) {
        case "direct":
          return timed(() => direct(req.kind, req.sessions, req.rounds, req.baseURL, req.staggerMs));
        case "relay":
          return timed(() => viaRelay(req.url, req.kind, req.sessions, req.rounds, req.staggerMs));
        case "engine":
          return timed(() => viaServer(req.url, req.sessionIds, req.rounds, req.staggerMs));
        case "idle":
          return timed(() => idle(req.url, req.sessionIds));
        case "release":
          for (const ws of idlers.splice(0)) ws.close();
          return { type: "closed" };
        case "close":
          for (const ws of idlers.splice(0)) ws.close();
          return { type: "closed" };
        default:
          throw new Error(`clients: no ${req.type}`);
      }
    },
    async () => ({ type: "ready" }),
  );
}
