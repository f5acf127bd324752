// Speculative start: while a response is still streaming, a call whose arguments are already
// complete JSON and that is read-only, concurrency-safe, approval-free, not open-world, not
// network, not interactive, allowed by policy and not about to be loop-blocked starts early.
// When the dispatch arrives, the early run is used only if the final arguments are the same and
// still get the same verdict; otherwise it is aborted and its result discarded.
// Order: the model reads what it just wrote, so a call starts early only when every call before
// it in the same response is known and read-only; a write earlier in the response runs in the
// dispatch, after the stream, and whatever follows it runs after it there.
import { randomUUID } from "node:crypto";
import type { Tool } from "../tools/tool";
import { decide, type LoadedPolicy } from "../policy/decide";
import { exactFingerprint } from "../policy/fingerprint";
import { modeRefusal } from "../policy/modes";
import { modeFor } from "../services/session-modes";
import { REPEAT_LIMIT, type LoopGuard } from "./loop-guard";
import { execute, validate, type RunOutcome } from "./run";
import { resolve, servicesFor } from "./resolve";
import { OutputCollector } from "./stream";
import type { SpillStore } from "../services/spills";
import type { LockTable } from "./rwlock";
import type { PipelineDeps, PipelineLimits } from "./contract";

interface Entry {
  fingerprint: string;
  controller: AbortController;
  promise: Promise<RunOutcome>;
  startedAt: number;
  timer: NodeJS.Timeout;
}

const TTL_MS = 120_000;

/** The calls of the response streaming in a turn, in order: read-only, or not (yet) known to be. */
interface ResponseOrder {
  calls: Map<string, boolean>;
  touched: number;
}

/** The verdict an early start needs, judged on input alone (policy checked separately). */
export function speculable(tool: Tool, input: unknown): boolean {
  return (
    tool.executor !== "server" &&
    !tool.failClosed &&
    !tool.capabilities.includes("Network") &&
    !tool.capabilities.includes("Interactive") &&
    tool.isReadOnly(input) &&
    tool.isConcurrencySafe(input) &&
    !tool.isOpenWorld(input) &&
    tool.approvalFor(input) === "auto"
  );
}

export class Speculator {
  private entries = new Map<string, Entry>();
  private orders = new Map<string, ResponseOrder>();

  constructor(
    private deps: Pick<PipelineDeps, "db" | "tools" | "executors" | "policies" | "toolServices" | "log"> & {
      spills: SpillStore;
    },
    private limits: PipelineLimits,
    private loopGuard: LoopGuard,
    private locks: LockTable,
    private sessionSignal: (sessionId: string) => AbortSignal,
  ) {}

  private key(sessionId: string, turnId: string, providerCallId: string) {
    return `${sessionId}\0${turnId}\0${providerCallId}`;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Called as arguments stream; starts an early run when the call qualifies. Never throws. */
  offer(sessionId: string, turnId: string, call: { providerCallId: string; name: string; rawArguments: string }): void {
    const complete = call.rawArguments.trimEnd().endsWith("}");
    const r = complete ? resolve(this.deps, sessionId, call, true) : undefined;
    const readOnly = r?.ok === true && !r.argumentsRepaired && r.tool.isReadOnly(r.input);
    if (!this.inOrder(sessionId, turnId, call.providerCallId, readOnly)) return;
    if (!r?.ok || r.argumentsRepaired || !speculable(r.tool, r.input)) return;
    const fingerprint = exactFingerprint(r.name, r.input);
    const key = this.key(sessionId, turnId, call.providerCallId);
    const existing = this.entries.get(key);
    if (existing?.fingerprint === fingerprint) return;
    if (existing) this.drop(key);
    const controller = new AbortController();
    const onSession = () => controller.abort(new Error("cancelled"));
    const sessionSignal = this.sessionSignal(sessionId);
    sessionSignal.addEventListener("abort", onSession, { once: true });
    const tool = r.tool;
    const input = r.input;
    const promise = this.allowed(sessionId, turnId, tool, input, fingerprint)
      .then(async (ok): Promise<RunOutcome> => {
        if (!ok || controller.signal.aborted) return { kind: "cancelled" };
        return this.locks.hold(sessionId, false, async () => {
          const callId = `spec_${randomUUID()}`;
          const log = this.deps.log ?? { warn: () => undefined, error: () => undefined };
          const rc = {
            sessionId,
            callId,
            signal: controller.signal,
            executors: this.deps.executors,
            services: servicesFor(this.deps, this.deps.spills, sessionId),
            callTimeoutMs: this.limits.callTimeoutMs,
            onProgress: () => undefined,
            // An early `cat big.log` keeps its whole output like any other run (stream.ts).
            collect: () =>
              new OutputCollector({
                spills: this.deps.spills,
                sessionId,
                toolCallId: callId,
                limits: this.limits.shell,
                log,
                ceiling: this.limits.outputCeiling,
              }),
          };
          return (await validate(tool, input, rc)) ?? (await execute(tool, input, rc));
        });
      })
      .catch((): RunOutcome => ({ kind: "cancelled" }))
      .finally(() => sessionSignal.removeEventListener("abort", onSession));
    const timer = setTimeout(() => this.drop(key), TTL_MS);
    timer.unref();
    this.entries.set(key, { fingerprint, controller, promise, startedAt: Date.now(), timer });
  }

  /**
   * Records the call's place and verdict in its response; true when every call before it is
   * read-only. A call no longer known to be read-only stops the early runs of the calls after it.
   */
  private inOrder(sessionId: string, turnId: string, providerCallId: string, readOnly: boolean): boolean {
    const now = Date.now();
    for (const [k, o] of this.orders) if (now - o.touched > TTL_MS) this.orders.delete(k);
    const turnKey = `${sessionId}\0${turnId}`;
    let order = this.orders.get(turnKey);
    if (!order) this.orders.set(turnKey, (order = { calls: new Map(), touched: now }));
    order.touched = now;
    order.calls.set(providerCallId, readOnly);
    let clear = true;
    let after = false;
    for (const [id, ro] of order.calls) {
      if (id === providerCallId) {
        after = true;
        if (!readOnly) clear = false;
        continue;
      }
      if (!after && !ro) clear = false;
      if (after && !readOnly) this.drop(this.key(sessionId, turnId, id));
    }
    return clear;
  }

  private async allowed(
    sessionId: string,
    turnId: string,
    tool: Tool,
    input: unknown,
    fingerprint: string,
  ): Promise<boolean> {
    if (this.loopGuard.peek(sessionId, turnId, fingerprint) >= REPEAT_LIMIT - 1) return false;
    const session = await this.deps.db.session.findUnique({ where: { id: sessionId }, select: { orgId: true } });
    if (!session) return false;
    // Plan mode refuses a read-only shell line as any shell call: it must not have run early.
    const mode = (await modeFor(this.deps.db, sessionId))?.mode;
    if (!mode || modeRefusal(mode, tool)) return false;
    const policy: LoadedPolicy = await this.deps.policies.load(session.orgId);
    const d = decide({ tool, input }, policy, { sessionKeys: new Set(), rejected: new Map() });
    return d.action === "run" && (d.decision === "auto" || d.decision === "policy_allow");
  }

  /**
   * The early run for this call if its fingerprint matches and the dispatch still judges it
   * eligible; any other early run for the call is aborted and discarded.
   */
  take(
    sessionId: string,
    turnId: string,
    providerCallId: string,
    fingerprint: string,
    eligible: boolean,
  ): { promise: Promise<RunOutcome>; startedAt: number } | undefined {
    const key = this.key(sessionId, turnId, providerCallId);
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.fingerprint !== fingerprint || !eligible) {
      this.drop(key);
      return undefined;
    }
    clearTimeout(e.timer);
    this.entries.delete(key);
    return { promise: e.promise, startedAt: e.startedAt };
  }

  /** Aborts early runs of a turn that the dispatch did not use. */
  discardTurn(sessionId: string, turnId: string): void {
    const prefix = `${sessionId}\0${turnId}\0`;
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.drop(key);
    // The next response of the turn is a new order.
    this.orders.delete(`${sessionId}\0${turnId}`);
  }

  private drop(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    clearTimeout(e.timer);
    e.controller.abort(new Error("discarded"));
    this.entries.delete(key);
  }

  dispose(): void {
    for (const key of [...this.entries.keys()]) this.drop(key);
    this.orders.clear();
  }
}
