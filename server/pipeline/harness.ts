// Test harness: a pipeline over a real test database with the scripted executor, real policy
// and spill services, and an event log. Used by the pipeline's tests and benchmark only.
import { afterAll } from "vitest";
import type { DbProvider } from "../db";
import type { TestDb } from "../testing/db";
import type { SessionEventBody } from "../protocol/events";
import type { Tool } from "../tools/tool";
import { createExecutorRouter } from "../executors/router";
import { createPolicyService } from "../services/policies";
import { createSpillStore, type SpillStore } from "../services/spills";
import { createPipeline, type Pipeline } from "./index";
import type { DispatchRequest, ModelToolCall } from "./contract";
import type { PipelineDeps } from "./types";
import {
  ScriptedExecutor,
  fatalTool,
  fetchTool,
  readTool,
  seedSession,
  shellTool,
  toolStates,
  writeTool,
} from "./testkit";

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
