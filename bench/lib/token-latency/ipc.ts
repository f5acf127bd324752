// The token-latency benchmark runs in five processes, as the product does: the server (only
// the server), the fake model provider, the clients (browsers), the relay (the floor a server
// in the middle costs: relay.ts), and the orchestrator that starts them and reads the figures. These are the messages between them (zod, like every
// message between processes) and the one helper that owns a child and asks it things.
// Times are process.hrtime ns: CLOCK_MONOTONIC, one clock for every process on the machine.
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { z } from "zod";

/** Tokens per session's reply, and the pause between two (one SSE event each). */
export const TOKENS = Number(process.env.BENCH_TOKENS ?? 120);
export const DELAY_MS = Number(process.env.BENCH_DELAY_MS ?? 15);
/** Turns each session runs back to back in a case. */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** `s07r2t0042 `: session 7, its turn 2, token 42 (five digits and more past 9999). */
export const TOKEN = /s\d{2}r\d+t\d{4,}/g;
/** A token's position in its reply. */
export const position = (token: string) => Number(token.slice(token.lastIndexOf("t") + 1));
/** The text that starts session s's turn r; the fake provider answers it with that turn's tokens. */
export const prompt = (s: number, r: number) => `bench s${String(s).padStart(2, "0")}r${r}`;

const kind = z.enum(["anthropic", "openai"]);
/** [token, hrtime ns] pairs: when the fake provider wrote a token, or a client got it. */
const times = z.array(z.tuple([z.string(), z.number()]));

export const Request = z.discriminatedUnion("type", [
  // fake provider and relay
  z.object({ type: z.literal("collect") }),
  // server
  z.object({ type: z.literal("seed"), kind, sessions: z.number().int().positive() }),
  z.object({ type: z.literal("begin"), label: z.string() }),
  z.object({ type: z.literal("end") }),
  /** After a full garbage collection (the server runs with --expose-gc): its heap and RSS. */
  z.object({ type: z.literal("heap") }),
  // clients
  z.object({
    type: z.literal("direct"),
    kind,
    sessions: z.number().int().positive(),
    rounds: z.number().int().positive(),
    baseURL: z.string(),
    staggerMs: z.number(),
  }),
  z.object({
    type: z.literal("engine"),
    url: z.string(),
    sessionIds: z.array(z.string()),
    rounds: z.number().int().positive(),
    staggerMs: z.number(),
  }),
  z.object({
    type: z.literal("relay"),
    kind,
    url: z.string(),
    sessions: z.number().int().positive(),
    rounds: z.number().int().positive(),
    staggerMs: z.number(),
  }),
  /** Opens one socket per session, each following its session's events as an open IDE page
   *  does, and answers once all are subscribed; they stay open, idle, until `release`. */
  z.object({ type: z.literal("idle"), url: z.string(), sessionIds: z.array(z.string()) }),
  z.object({ type: z.literal("release") }),
  // every child
  z.object({ type: z.literal("close") }),
]);
export type Request = z.infer<typeof Request>;

export const Reply = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("ready"),
    anthropicBaseURL: z.string().optional(),
    openaiBaseURL: z.string().optional(),
    url: z.string().optional(),
  }),
  /** `cpuMs`: the answering process's CPU while it produced them (clients: the case; fake
   * provider: since the previous collect). */
  z.object({ type: z.literal("times"), times, cpuMs: z.number() }),
  z.object({ type: z.literal("seeded"), sessionIds: z.array(z.string()) }),
  z.object({ type: z.literal("begun") }),
  /** Server CPU (user + system, all threads), its event loop's busy share and time, and loop delay, between begin and end. */
  z.object({
    type: z.literal("ended"),
    cpuMs: z.number(),
    elu: z.number(),
    loopMs: z.number(),
    delayP99Ms: z.number(),
    delayMaxMs: z.number(),
    gcMs: z.number(),
    gcMaxMs: z.number(),
    gcCount: z.number(),
    mainWaitMs: z.number().optional(),
    mainSwitches: z.object({ voluntary: z.number(), involuntary: z.number() }).optional(),
    handedOver: times.optional(),
    parsed: times.optional(),
    arrived: times.optional(),
    threads: z.array(z.tuple([z.string(), z.number()])).optional(),
  }),
  /** `textDeltas`: text.delta events the server's hub has published since it started. */
  z.object({ type: z.literal("heap"), heapUsed: z.number(), rss: z.number(), textDeltas: z.number() }),
  z.object({ type: z.literal("closed") }),
  z.object({ type: z.literal("error"), message: z.string() }),
]);
export type Reply = z.infer<typeof Reply>;

/** Inside a child: answers each request in order with what `handle` returns. */
export function serve(handle: (req: Request) => Promise<Reply>, ready: () => Promise<Reply>): void {
  let chain = Promise.resolve();
  const send = (r: Reply) => new Promise<void>((res) => process.send!(r, () => res()));
  process.on("message", (raw) => {
    chain = chain.then(async () => {
      const req = Request.parse(raw);
      try {
        await send(await handle(req));
      } catch (err) {
        await send({ type: "error", message: (err as Error).stack ?? String(err) });
      }
      if (req.type === "close") process.disconnect();
    });
  });
  void ready().then(send, (err: unknown) => send({ type: "error", message: (err as Error).stack ?? String(err) }));
}

export interface Child {
  ready: Extract<Reply, { type: "ready" }>;
  ask<T extends Reply["type"]>(req: Request, expect: T): Promise<Extract<Reply, { type: T }>>;
  /** Asks it to close, then makes sure the process is gone. */
  close(): Promise<void>;
}

// A child that exits unasked ends every question to any child: the clients would otherwise
// wait forever for a server that is gone.
let failed: (err: Error) => void;
const anyExit = new Promise<never>((_, reject) => (failed = reject));
anyExit.catch(() => undefined);

/** Starts bench/lib/token-latency/<name>.ts in its own Node process (tsx, optional flags). */
export async function startChild(name: string, args: string[] = [], nodeFlags: string[] = []): Promise<Child> {
  const file = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  const proc: ChildProcess = fork(file, args, { execArgv: ["--import", "tsx", ...nodeFlags], stdio: "inherit" });
  const replies: Reply[] = [];
  const waiters: ((r: Reply) => void)[] = [];
  let exited = false;
  let closing = false;
  const gone = new Promise<void>((r) =>
    proc.once("exit", (code, signal) => {
      exited = true;
      if (!closing) failed(new Error(`${name} exited unasked (${signal ?? code})`));
      r();
    }),
  );
  proc.on("message", (raw) => {
    const r = Reply.parse(raw);
    const w = waiters.shift();
    if (w) w(r);
    else replies.push(r);
  });
  void gone.then(() => {
    for (const w of waiters.splice(0)) w({ type: "error", message: `${name} exited` });
  });
  const next = () => new Promise<Reply>((r) => (replies.length > 0 ? r(replies.shift()!) : waiters.push(r)));
  const expectType = <T extends Reply["type"]>(r: Reply, t: T) => {
    if (r.type !== t) throw new Error(`${name}: expected ${t}, got ${r.type === "error" ? r.message : r.type}`);
    return r as Extract<Reply, { type: T }>;
  };
  const ready = expectType(await Promise.race([next(), anyExit]), "ready");
  return {
    ready,
    async ask(req, t) {
      proc.send(req);
      return expectType(await Promise.race([next(), anyExit]), t);
    },
    async close() {
      closing = true;
      if (!exited) {
        proc.send({ type: "close" });
        const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        await gone;
        clearTimeout(timer);
      }
    },
  };
}
