// A local model provider for tests, benchmarks and manual runs: answers Anthropic
// `/v1/messages` and OpenAI `/v1/chat/completions` from a queue of scripted steps, over the real
// SSE wire formats, and `GET /v1/models` in either format (models.ts), and records the requests it receives (parsed body included) so tests can
// check what the model was sent and that the prompt prefix stayed byte-stable. The record keeps
// the latest `keepRequests` (default 200): a fake left running for hours of turns holds a
// bounded log, not every request body it was ever sent.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { forPass, parseStep, type ScriptResponse, type ScriptStep, type ScriptStepInput } from "./script";
import { anthropicEvents, errorBody, openaiEvents } from "./wire";
import { DEFAULT_FAKE_MODELS, isAnthropicRequest, modelsResponse, type FakeModelList } from "./models";

export type WireFormat = "anthropic" | "openai";

export interface RecordedRequest {
  format: WireFormat;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  body: Record<string, unknown>;
}

export interface FakeProviderOptions {
  steps?: ScriptStepInput[];
  loop?: boolean;
  port?: number;
  /** Answers a request when the scripted steps have run out (steps built from what was asked). */
  respond?: (request: RecordedRequest, index: number) => ScriptStepInput | undefined;
  /** Called as each write of a stream has gone out (benchmarks timestamp tokens with it). */
  onWrite?: (requestIndex: number, chunk: Buffer) => void;
  /** Requests kept in `requests`, the latest ones (default 200). */
  keepRequests?: number;
  /** What `GET /v1/models` answers (default DEFAULT_FAKE_MODELS). */
  models?: FakeModelList;
}

export const DEFAULT_KEEP_REQUESTS = 200;

export interface FakeProvider {
  /** For ANTHROPIC_BASE_URL (the SDK appends /v1/messages). */
  anthropicBaseURL: string;
  /** For OPENAI_BASE_URL (ends in /v1; the SDK appends /chat/completions). */
  openaiBaseURL: string;
  port: number;
  /** The latest requests (at most `keepRequests`), oldest first. */
  requests: RecordedRequest[];
  /** Every request received since the start, kept or not. */
  received(): number;
  enqueue(...steps: ScriptStepInput[]): void;
  /** Replaces what `GET /v1/models` answers: a list, or `{ status }` to fail. */
  setModels(list: FakeModelList): void;
  /** `GET /v1/models` requests received since the start. */
  modelLists(): number;
  /** Steps not yet answered. */
  pending(): number;
  /** Responses still streaming: one a client hung up on no longer counts. */
  streaming(): number;
  /** Lets every stream held at its `pauseAfterBytes` go on; with none held yet, the next one to reach its pause goes on. */
  resume(): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFakeProvider(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  const script: ScriptStep[] = (options.steps ?? []).map(parseStep);
  let cursor = 0;
  /** Times through the script (script.ts: forPass): a looping script starts a new pass. */
  let pass = 1;
  let streaming = 0;
  let received = 0;
  let models: FakeModelList = options.models ?? DEFAULT_FAKE_MODELS;
  let modelLists = 0;
  const keep = options.keepRequests ?? DEFAULT_KEEP_REQUESTS;
  if (!Number.isInteger(keep) || keep < 0) throw new Error(`keepRequests must be a whole number ≥ 0, got ${keep}`);
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const paused = new Set<() => void>();
  // A resume() that came before its stream reached the pause point (a fast test on a slow
  // machine) is kept for the next stream that pauses, so that stream does not hold forever.
  let earlyResumes = 0;

  const nextStep = (request: RecordedRequest, index: number): ScriptStep | undefined => {
    if (cursor >= script.length && options.loop && script.length > 0) [cursor, pass] = [0, pass + 1];
    if (cursor < script.length) return forPass(script[cursor++], pass);
    const built = options.respond?.(request, index);
    return built ? parseStep(built) : undefined;
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `fake provider failed: ${(err as Error).message}` } }));
    });
  });
  server.on("connection", (s) => {
    s.setNoDelay(true);
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const path = (req.url ?? "").split("?")[0];
    const format: WireFormat | undefined = path.endsWith("/messages")
      ? "anthropic"
      : path.endsWith("/chat/completions")
        ? "openai"
        : undefined;
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    if (req.method === "GET" && path.endsWith("/models")) {
      modelLists++;
      const answer = modelsResponse(isAnthropicRequest(req), models);
      res.writeHead(answer.status, { "content-type": "application/json", "x-should-retry": "false" }).end(answer.body);
      return;
    }
    if (req.method !== "POST" || !format) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }));
      return;
    }
    const body = JSON.parse(raw) as Record<string, unknown>;
    const recorded: RecordedRequest = { format, path, headers: req.headers, raw, body };
    const index = received++;
    requests.push(recorded);
    if (requests.length > keep) requests.splice(0, requests.length - keep);
    const step = nextStep(recorded, index);
    if (!step) {
      res
        .writeHead(400, { "content-type": "application/json" })
        .end(
          errorBody(
            format,
            400,
            "invalid_request_error",
            "fake provider: the script has no step left for this request",
          ),
        );
      return;
    }
    if (step.kind === "http_error") {
      const headers: Record<string, string> = { "content-type": "application/json", "x-should-retry": "false" };
      if (step.retryAfter !== undefined) headers["retry-after"] = step.retryAfter;
      res.writeHead(step.status, headers).end(errorBody(format, step.status, step.type, step.message));
      return;
    }
    const model = String(body.model ?? "fake-model");
    const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    const events =
      format === "anthropic" ? anthropicEvents(step, model, index) : openaiEvents(step, model, index, includeUsage);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    streaming++;
    try {
      await writeStream(res, events, step, index);
    } finally {
      streaming--;
    }
  }

  async function writeStream(res: ServerResponse, events: string[], step: ScriptResponse, requestIndex: number) {
    let writes: Buffer[] = events.map((e) => Buffer.from(e, "utf8"));
    if (step.chunkBytes) writes = splitBytes(Buffer.concat(writes), step.chunkBytes);
    let sent = 0;
    let closed = false;
    res.on("close", () => (closed = true));
    if (step.pauseAfterBytes !== undefined) writes = splitAt(writes, step.pauseAfterBytes);
    for (let i = 0; i < writes.length; i++) {
      let w = writes[i];
      if (
        step.pauseAfterBytes !== undefined &&
        sent === step.pauseAfterBytes &&
        sent > 0 &&
        !closed &&
        earlyResumes > 0
      )
        earlyResumes--;
      else if (step.pauseAfterBytes !== undefined && sent === step.pauseAfterBytes && sent > 0 && !closed) {
        await new Promise<void>((r) => {
          const go = () => {
            paused.delete(go);
            r();
          };
          paused.add(go);
          res.on("close", go);
        });
      }
      if (step.hangAfterBytes !== undefined && sent + w.length > step.hangAfterBytes) {
        w = w.subarray(0, step.hangAfterBytes - sent);
        if (w.length) res.write(w);
        // Stall until the client hangs up (cancel) or the server closes.
        await new Promise<void>((r) => (closed ? r() : res.on("close", () => r())));
        return;
      }
      if (closed) return;
      await new Promise<void>((r) => res.write(w, () => r()));
      options.onWrite?.(requestIndex, w);
      sent += w.length;
      if (step.delayMs > 0) await sleep(step.delayMs);
      else if (step.chunkBytes) await new Promise((r) => setImmediate(r));
    }
    res.end();
  }

  // A port in use (EADDRINUSE) rejects here, for the caller to say in a line, not as a crash.
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    anthropicBaseURL: `http://127.0.0.1:${port}`,
    openaiBaseURL: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    received: () => received,
    enqueue: (...steps) => script.push(...steps.map(parseStep)),
    setModels: (list) => void (models = list),
    modelLists: () => modelLists,
    pending: () => Math.max(0, script.length - cursor),
    streaming: () => streaming,
    resume: () => {
      if (paused.size === 0) earlyResumes++;
      for (const go of [...paused]) go();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The same bytes with a write boundary at `offset`, so a pause can fall exactly there. */
function splitAt(writes: Buffer[], offset: number): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  for (const w of writes) {
    if (offset > at && offset < at + w.length) out.push(w.subarray(0, offset - at), w.subarray(offset - at));
    else out.push(w);
    at += w.length;
  }
  return out;
}

/** Cuts anywhere: inside event lines, JSON strings and multi-byte UTF-8 characters. */
export function splitBytes(all: Buffer, sizes: number[]): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  for (let i = 0; at < all.length; i++) {
    const size = sizes[i % sizes.length];
    out.push(all.subarray(at, at + size));
    at += size;
  }
  return out;
}
