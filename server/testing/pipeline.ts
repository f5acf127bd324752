// Test helpers for the pipeline, imported by its tests and the benchmark only (never by the
// server): a scripted Executor standing in for the runner; small tools shaped like the real
// built-ins (a read tool, a shell tool with per-command approval, a writer, a network fetcher,
// a fatal tool); and a harness that builds a pipeline over a real test database with the
// scripted executor, real policy and spill services, and an event log.
import { afterAll } from "vitest";
import { z } from "zod";
import type { ExecRequest, ExecResult, Executor } from "../executors/contract";
import { fatal } from "../tools/errors";
import { defineTool, type Tool } from "../tools/tool";
import { ToolRegistry } from "../tools/registry";
import { SessionToolState } from "../tools/session";
import type { DbProvider } from "../db";
import type { TestDb } from "./db";
import type { SessionEventBody } from "../protocol/events";
import { createExecutorRouter } from "../executors/router";
import { createPolicyService } from "../services/policies";
import { createSpillStore, type SpillStore } from "../services/spills";
import { createPipeline, type Pipeline } from "../pipeline/index";
import type { DispatchRequest, ModelToolCall, PipelineDeps } from "../pipeline/contract";

export interface Script {
  /** Delay before answering, ms. */
  delayMs?: number;
  result?: ExecResult;
  throws?: Error;
}

/** TEST DOUBLE: an Executor that answers from a script and records what it was asked. */
export class ScriptedExecutor implements Executor {
  readonly kind = "runner" as const;
  calls: ExecRequest[] = [];
  inFlight = 0;
  maxInFlight = 0;
  cancelled: string[] = [];
  connected = true;

  constructor(private script: (req: ExecRequest) => Script = () => ({ result: { ok: true, output: "ok" } })) {}

  available(): boolean {
    return this.connected;
  }

  setScript(script: (req: ExecRequest) => Script): void {
    this.script = script;
  }

  run(req: ExecRequest): Promise<ExecResult> {
    this.calls.push(req);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const s = this.script(req);
    return new Promise<ExecResult>((resolve, reject) => {
      const done = () => {
        this.inFlight--;
        req.signal.removeEventListener("abort", onAbort);
      };
      const timer = setTimeout(() => {
        done();
        if (s.throws) reject(s.throws);
        else resolve(s.result ?? { ok: true, output: "ok" });
      }, s.delayMs ?? 0);
      const onAbort = () => {
        clearTimeout(timer);
        done();
        this.cancelled.push(req.callId);
        reject(new Error("aborted by the pipeline"));
      };
      if (req.signal.aborted) onAbort();
      else req.signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}

const fromRemote = (r: ExecResult, kind?: "shell" | "text") => ({
  output: r.output,
  isError: !r.ok,
  kind,
  meta: r.meta,
});

export const readTool = defineTool({
  name: "read_file",
  description: "Reads a file.",
  input: z.object({ path: z.string() }),
  capabilities: ["ReadsFiles"],
  executor: "runner",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  async validateInput(input) {
    return input.path.includes("..") ? "path must stay inside the workspace" : undefined;
  },
  async execute(input, ctx) {
    return fromRemote(await ctx.remote(input));
  },
});

const SAFE = /^(ls|cat|echo|git status|pwd)\b/;
export const shellTool = defineTool({
  name: "shell",
  description: "Runs a command.",
  input: z.object({ command: z.string() }),
  capabilities: ["ExecutesCode"],
  executor: "runner",
  approvalFor: (i) => (SAFE.test(i.command) && !/[;&|`$]/.test(i.command) ? "auto" : "required"),
  summarize: (i) => `$ ${i.command}`,
  async execute(input, ctx) {
    return fromRemote(await ctx.remote(input), "shell");
  },
});

export const writeTool = defineTool({
  name: "write_file",
  description: "Writes a file.",
  input: z.object({ path: z.string(), content: z.string() }),
  capabilities: ["WritesFiles"],
  executor: "runner",
  async execute(input, ctx) {
    return fromRemote(await ctx.remote(input));
  },
});

export const fetchTool = defineTool({
  name: "fetch_url",
  description: "Fetches a URL.",
  input: z.object({ url: z.string() }),
  capabilities: ["Network"],
  executor: "runner",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  async execute(input, ctx) {
    const r = await ctx.remote(input);
    return { output: r.output, isError: !r.ok, network: true, meta: { url: input.url } };
  },
});

export const fatalTool = defineTool({
  name: "explode",
  description: "Always fails fatally.",
  input: z.object({}),
  capabilities: [],
  executor: "server",
  isReadOnly: () => true,
  async execute() {
    throw fatal("the workspace is gone");
  },
});

/** A tool whose output is produced in-process: bytes or text of a given size. */
export function bigOutputTool(
  make: () => { output: string; bytes?: Uint8Array; kind?: "shell" | "text"; running?: boolean },
): Tool {
  return defineTool({
    name: "big_output",
    description: "Produces big output.",
    input: z.object({ n: z.number().optional() }),
    capabilities: [],
    executor: "server",
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    async execute() {
      const o = make();
      return {
        output: o.output,
        kind: o.kind,
        meta: { ...(o.bytes ? { bytes: o.bytes } : {}), ...(o.running ? { running: true } : {}) },
      };
    },
  });
}

export function toolStates(tools: Tool[]): { forSession(sessionId: string): SessionToolState } {
  const registry = new ToolRegistry(tools);
  const states = new Map<string, SessionToolState>();
  return {
    forSession(sessionId) {
      let s = states.get(sessionId);
      if (!s) states.set(sessionId, (s = new SessionToolState(registry)));
      return s;
    },
  };
}

/** A user, an org (with the user as `role`) and a session owned by the user. */
export async function seedSession(db: import("../db").Db, role: "owner" | "admin" | "member" = "owner") {
  const tag = Math.random().toString(36).slice(2, 10);
  const user = await db.user.create({ data: { email: `u-${tag}@example.com`, name: "Uma" } });
  const org = await db.org.create({ data: { slug: `org-${tag}`, name: "Org" } });
  await db.membership.create({ data: { userId: user.id, orgId: org.id, role } });
  const session = await db.session.create({
    data: { title: "t", ownerId: user.id, orgId: org.id, workspace: "/tmp/ws" },
  });
  const actor = { userId: user.id, orgId: org.id, role };
  return { user, org, session, actor };
}

/** Polls until `fn` returns a truthy value (10 s at most). */
export async function waitFor<T>(fn: () => T | Promise<T>, what = "condition"): Promise<NonNullable<T>> {
  const end = Date.now() + 10_000;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export interface Harness {
  pipeline: Pipeline;
  exec: ScriptedExecutor;
  spills: SpillStore & { close(): Promise<void> };
  events: { sessionId: string; event: SessionEventBody }[];
  errors: string[];
  settled: string[];
  deps: PipelineDeps;
  close(): Promise<void>;
}

export function makePipeline(
  db: TestDb,
  opts: { tools?: Tool[]; exec?: ScriptedExecutor; deps?: Partial<PipelineDeps> } = {},
): Harness {
  const exec = opts.exec ?? new ScriptedExecutor();
  const spills = createSpillStore(db.db, db.url);
  const events: Harness["events"] = [];
  const errors: string[] = [];
  const settled: string[] = [];
  const deps: PipelineDeps = {
    db: db.db,
    rows: db.rows,
    provider: db.provider as DbProvider,
    tools: toolStates(opts.tools ?? [readTool, shellTool, writeTool, fetchTool, fatalTool]),
    executors: createExecutorRouter({ runner: exec }),
    policies: createPolicyService(db.db),
    spills,
    emit: (sessionId, event) => void events.push({ sessionId, event }),
    onSettled: (i) => void settled.push(i.toolCallId),
    log: { warn: (m) => void errors.push(`warn: ${m}`), error: (m) => void errors.push(`error: ${m}`) },
    limits: { approvalPollMs: 100 },
    ...opts.deps,
  };
  const pipeline = createPipeline(deps);
  return {
    pipeline,
    exec,
    spills,
    events,
    errors,
    settled,
    deps,
    async close() {
      pipeline.dispose();
      await spills.close();
    },
  };
}

let n = 0;
export const call = (name: string, args: unknown, id = `toolu_${++n}`): ModelToolCall => ({
  providerCallId: id,
  name,
  rawArguments: typeof args === "string" ? args : JSON.stringify(args),
});

export async function newTurn(db: TestDb, role: "owner" | "admin" | "member" = "owner") {
  const seeded = await seedSession(db.db, role);
  const turn = await db.db.turn.create({ data: { sessionId: seeded.session.id } });
  return { ...seeded, turn };
}

export function request(
  h: Harness,
  s: { session: { id: string }; turn: { id: string }; user: { id: string } },
  calls: ModelToolCall[],
  extra: Partial<DispatchRequest> = {},
): DispatchRequest {
  return {
    sessionId: s.session.id,
    turnId: s.turn.id,
    actorId: s.user.id,
    calls,
    strict: false,
    signal: new AbortController().signal,
    emit: (event) => void h.events.push({ sessionId: s.session.id, event }),
    ...extra,
  };
}

/** Vitest: a `setup(opts)` that builds harnesses on the block's database and closes them all after it. */
export function usePipelines(db: { readonly current: TestDb }): (opts?: Parameters<typeof makePipeline>[1]) => Harness {
  const harnesses: Harness[] = [];
  afterAll(async () => {
    for (const h of harnesses) await h.close();
  });
  return (opts = {}) => {
    const h = makePipeline(db.current, opts);
    harnesses.push(h);
    return h;
  };
}

export type ApprovalCard = Extract<SessionEventBody, { type: "approval.required" }>;

/** The approval cards a harness has shown for `sessionId`, in order. */
export function approvalCards(h: Harness, sessionId: string): ApprovalCard[] {
  return h.events
    .filter((e) => e.sessionId === sessionId && e.event.type === "approval.required")
    .map((e) => e.event as ApprovalCard);
}
