// The approval stage of a call that needs one: validate and preview first (a card never asks
// about a call that cannot run, and shows a change as the file's real diff), open the Approval
// row bound to these exact arguments, show the card, wait (cancel wins), then record the
// answer and run the call at most once.
import { approvalCard } from "./card";
import { callFacts } from "../policy/decide";
import { sessionFingerprint, sessionKeys } from "../policy/fingerprint";
import { safeEmit, type CallState, type Core, type TurnState } from "./core";
import { CANCELLED_BEFORE, callSignal, finishOutcome, runAndFinish, runContext, settle } from "./finish";
import { audit } from "./plan";
import { preview, validate } from "./run";

export const INTERRUPTED =
  "Not run yet: the server restarted while this call waited for approval. The approval card stays open; once it is answered the call runs (at most once) and its result is stored.";

export async function approveAndRun(core: Core, turn: TurnState, call: CallState): Promise<void> {
  const tool = call.tool!;
  const input = call.input;
  const { signal, dispose } = callSignal(core, turn);
  let approvalId: string | undefined;
  try {
    const rc = runContext(core, turn, call, signal);
    const invalid = await validate(tool, input, rc);
    if (invalid) return await finishOutcome(core, turn, call, invalid);
    const change = await preview(tool, input, rc);
    if (change && "problem" in change)
      return await finishOutcome(core, turn, call, { kind: "invalid", message: change.problem });
    call.validated = true;
    const reason = call.decision?.reason ?? "This call needs approval.";
    const card = approvalCard(
      tool,
      input,
      reason,
      change?.diff,
      call.decision?.action === "ask" ? call.decision.unchecked : undefined,
    );
    const keys = sessionKeys(callFacts({ tool, input }));
    const approval = await core.broker.open({
      sessionId: turn.sessionId,
      toolCallId: call.toolCallId,
      fingerprint: sessionFingerprint(keys),
      exactFingerprint: call.fingerprint!,
      request: card,
      reason,
    });
    approvalId = approval.id;
    await core.recorder.update(call.toolCallId, { status: "awaiting_approval" });
    await safeEmit(core, turn, { type: "tool.status", callId: call.toolCallId, status: "awaiting_approval" });
    await safeEmit(core, turn, {
      type: "approval.required",
      approvalId: approval.id,
      callId: call.toolCallId,
      request: card,
    });
    await audit(
      core,
      turn,
      call,
      "approval_requested",
      reason,
      call.decision?.decision === "policy_ask" ? "policy" : "tool",
      undefined,
      { approvalId: approval.id },
    );
    await waitAndRun(core, turn, call, approval.id, keys, signal);
  } finally {
    if (approvalId) core.broker.release(approvalId);
    dispose();
  }
}

/** Waits for the answer of an open approval and acts on it. Shared with re-attached calls. */
export async function waitAndRun(
  core: Core,
  turn: TurnState,
  call: CallState,
  approvalId: string,
  keys: string[],
  signal: AbortSignal,
): Promise<void> {
  const answer = await core.broker.wait(approvalId, signal);
  if (answer.interrupted) {
    call.content = INTERRUPTED;
    call.isError = true;
    call.outcome = "neutral";
    return;
  }
  await settleAnswer(core, turn, call, approvalId, keys, answer, signal);
}

export async function settleAnswer(
  core: Core,
  turn: TurnState,
  call: CallState,
  approvalId: string,
  keys: string[],
  answer: { decision: string; by?: string; message?: string },
  signal: AbortSignal,
): Promise<void> {
  // Cancel wins over an approval that raced it.
  const decision = signal.aborted ? "cancelled" : answer.decision;
  await safeEmit(core, turn, {
    type: "approval.resolved",
    approvalId,
    callId: call.toolCallId,
    decision: decision as "approved_once" | "approved_session" | "rejected" | "cancelled",
    ...(answer.by ? { by: answer.by } : {}),
    ...(answer.message ? { message: answer.message } : {}),
  });
  if (decision === "cancelled") {
    await audit(core, turn, call, "cancelled", "cancelled while waiting for approval", "person");
    return settle(core, turn, call, "cancelled", CANCELLED_BEFORE, true, "neutral");
  }
  const by = answer.by ?? null;
  if (decision === "rejected") {
    turn.rejected.set(call.fingerprint!, answer.message);
    await core.recorder.update(call.toolCallId, {
      decision: "rejected",
      decisionReason: answer.message ?? "rejected by the person",
    });
    await audit(core, turn, call, "rejected", answer.message ?? "rejected by the person", "person", by, { approvalId });
    const msg = answer.message ? ` Their message: ${answer.message}` : "";
    return settle(
      core,
      turn,
      call,
      "rejected",
      `The person rejected this call; it did not run.${msg} Do not send it again as is.`,
      true,
      "neutral",
    );
  }
  const kind = decision === "approved_session" ? "approved_session" : "approved_once";
  if (kind === "approved_session") for (const k of keys) turn.sessionKeys.add(k);
  await core.recorder.update(call.toolCallId, { decision: kind, decisionReason: `approved by ${by ?? "a person"}` });
  await audit(
    core,
    turn,
    call,
    kind,
    kind === "approved_session" ? `approved for the session (covers ${keys.join(", ")})` : "approved once",
    "person",
    by,
    { approvalId },
  );
  if (!(await core.broker.claim(approvalId))) {
    // Another process holds the claim and writes the row; only the model's copy is ours.
    call.content = "This approved call was already run (or is running) elsewhere; it was not run a second time.";
    call.isError = true;
    call.outcome = "neutral";
    return;
  }
  await core.locks.hold(turn.sessionId, true, () => runAndFinish(core, turn, call));
}
