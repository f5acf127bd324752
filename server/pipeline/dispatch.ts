// One dispatch: the calls of a model response, each taken through its stages in the model's
// order — plan.ts, then approve.ts when a person must answer, run.ts, finish.ts. Consecutive
// batchable calls (read-only, concurrency-safe, approval-free, not interactive) run together
// under the session's read lock, at most `concurrency` at a time; every other call runs alone
// under the write lock, after its approval if it needs one. Loop-guard bookkeeping follows each
// group in slot order. Results come back in slot order whatever the completion order.
// An early run (speculative.ts) is used only while no call before it in the dispatch may have
// written: after one, the read runs again, after the write.
// A subagent's dispatch (parentCallId) runs inside its task call, which already holds the
// session's lock: its calls take no lock of their own (a nested one would wait behind a queued
// writer that waits for the task call), and they start no early runs.
import type { CallRecord, Core, DispatchOutcome, DispatchRequest } from "./contract";
import { approve } from "./approve";
import { guardKey } from "./loop-guard";
import { newRecord, plan, rawInput, refuse } from "./plan";
import { openTurn, refreshTurn, resumeCall } from "./resume";
import { runCall } from "./run";
import { speculable } from "./speculative";
import { subagentTools } from "./subagent";

const HALTED = (reason: string) => `Not run: the turn was stopped before this call (${reason}).`;
const CANCELLED = "Not run: the turn was cancelled.";

export async function dispatch(core: Core, req: DispatchRequest): Promise<DispatchOutcome> {
  const sub = req.parentCallId;
  const opened = await openTurn(core, req.sessionId, req.turnId, req.actorId, req.signal, sub ?? null);
  const turn = opened?.turn;
  if (!turn) {
    const content = `Session ${req.sessionId} does not exist; no tool ran.`;
    return {
      results: req.calls.map((c) => ({ providerCallId: c.providerCallId, name: c.name, content, isError: true })),
      halt: { reason: content },
    };
  }
  turn.emit = async (e) => {
    await req.emit(e);
  };
  turn.subagents = req.subagents;
  if (sub) turn.parent = { callId: sub, allowed: subagentTools(core.deps.tools, req.sessionId) };
  // Calls of this response stored already: a turn resumed after a restart (rare; Prisma for its rows).
  const stored = opened?.stored
    ? await core.deps.db.toolCall.findMany({
        where: { sessionId: req.sessionId, turnId: req.turnId, parentCallId: sub ?? null },
        include: { approval: true },
      })
    : [];
  const hold = <T>(write: boolean, fn: () => Promise<T>) => (sub ? fn() : core.locks.hold(req.sessionId, write, fn));
  const byProviderId = new Map(stored.map((r) => [r.providerCallId, r]));
  const done: CallRecord[] = [];
  let batch: CallRecord[] = [];
  // An early run started while the response streamed, before any call of this dispatch ran: after
  // a call that may have changed the workspace it saw the workspace before that change.
  let changedBefore = false;
  let waited = false;

  const post = async (calls: CallRecord[]) => {
    for (const c of calls) {
      const outcome = c.result?.outcome ?? "neutral";
      // A successful write changed the workspace; a command left running keeps changing it.
      if ((outcome === "success" && c.tool?.capabilities.includes("WritesFiles")) || c.running)
        core.loopGuard.changed(req.sessionId);
      const s = core.loopGuard.settle(guardKey(turn), req.turnId, outcome);
      if (s.warning)
        c.result = { isError: false, outcome, ...c.result, content: `${c.result?.content ?? ""}\n\n${s.warning}` };
      if (s.halt) turn.halt ??= s.halt;
      // A task call's subagent has ended: its own repeat count goes with it.
      if (c.toolCallId) core.loopGuard.forget(guardKey({ sessionId: req.sessionId, parent: { callId: c.toolCallId } }));
      done.push(c);
    }
  };
  const flush = async () => {
    if (batch.length === 0) return;
    const group = batch;
    batch = [];
    await hold(false, () =>
      runPool(
        group,
        core.limits.concurrency,
        (c) => runCall(c),
        (e, c) => {
          core.log.error(`batched call ${c.toolCallId} threw`, e);
        },
      ),
    );
    await post(group);
  };

  try {
    for (let slot = 0; slot < req.calls.length; slot++) {
      const mc = req.calls[slot];
      const prior = byProviderId.get(mc.providerCallId);
      if (prior) {
        await flush();
        await post([await resumeCall(turn, prior, slot)]);
        changedBefore = true;
        continue;
      }
      if (turn.halt || req.signal.aborted) {
        await flush();
        const call = newRecord(turn, slot, mc);
        await refuse(call, "cancelled", turn.halt ? HALTED(turn.halt) : CANCELLED, rawInput(mc.rawArguments));
        done.push(call);
        continue;
      }
      // After a call that waited for a person or ran alone, the next is judged by the policy and
      // mode as they are now (resume.ts refreshTurn); batched reads follow one another at once.
      if (waited) {
        await refreshTurn(turn);
        waited = false;
      }
      const call = await plan(turn, mc, slot, req.strict);
      if (call.result) {
        await flush();
        await post([call]);
        continue;
      }
      if (req.turnId && call.fingerprint && !sub) {
        const fresh = !changedBefore && call.batchable && speculable(call.tool!, call.input);
        const early = core.speculator.take(req.sessionId, req.turnId, mc.providerCallId, call.fingerprint, fresh);
        if (early) {
          call.early = early.promise;
          call.startedAt = early.startedAt;
        }
      }
      if (call.batchable) {
        batch.push(call);
        continue;
      }
      await flush();
      if (!call.tool?.isReadOnly(call.input)) changedBefore = true;
      if (call.decision?.action === "ask") await approve(call);
      else await hold(true, () => runCall(call));
      await post([call]);
      waited = true;
    }
    await flush();
  } finally {
    if (req.turnId && !sub) core.speculator.discardTurn(req.sessionId, req.turnId);
  }
  done.sort((a, b) => a.slot - b.slot);
  return {
    results: done.map((c) => ({
      providerCallId: c.providerCallId,
      name: c.name,
      content: c.result?.content ?? "",
      isError: c.result?.isError ?? false,
    })),
    ...(turn.halt ? { halt: { reason: turn.halt } } : {}),
  };
}

/** Runs `fn` over `items` with at most `cap` in flight; a call that throws fails only its own. */
async function runPool<T>(
  items: T[],
  cap: number,
  fn: (item: T) => Promise<void>,
  onError: (e: unknown, item: T) => void,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      try {
        await fn(item);
      } catch (e) {
        onError(e, item);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(cap, items.length)) }, worker));
}
