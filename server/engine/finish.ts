// The end of a turn: its open calls answered, its error said, its row and the session's status
// written, then turn.finished. A database that refuses these writes (disk full, read-only) must
// not leave the turn `running` for good, which would refuse every later message with "a turn is
// already running": what could not be written is handed to the engine as Unrecorded, and the
// engine writes it once the database takes writes again (at the session's next send or cancel,
// or its own retry, engine.ts), publishing the error and turn.finished the live stream showed
// but the log did not keep.
import { isDatabaseFault } from "../db/faults";
import type { TurnEnd } from "../db/turn-rows";
import type { SessionEventBody, TurnStatus, Usage } from "../protocol/events";
import { closeOpenCalls } from "./history";
import type { TurnDeps, TurnRun } from "./turn";

/** A turn end the database refused: the row to write and the events to store after it. An
 *  event with `stored` went out live and is published again only if that resolves false. */
export interface Unrecorded {
  end?: TurnEnd;
  events: { body: SessionEventBody; stored?: Promise<boolean> }[];
}

export interface TurnOutcome {
  status: TurnStatus;
  stopReason?: string;
  error?: { code: string; message: string };
  usage: Usage;
  openCalls: boolean;
}

/** Resolves true once the event is stored, false when it was refused (it still went out live). */
const stored = (p: Promise<unknown>) =>
  p.then(
    () => true,
    () => false,
  );

export async function finishTurn(
  deps: TurnDeps,
  run: TurnRun,
  end: TurnOutcome,
  emitted: () => Promise<unknown>,
): Promise<void> {
  const { db, hub } = deps;
  const { sessionId, turnId } = run;
  const why =
    end.status === "cancelled"
      ? "Cancelled by the user before this call finished."
      : end.status === "interrupted"
        ? "Not finished: the server shut down during this turn."
        : "Not run: the turn ended with an error before this call finished.";
  if (run.abandoned()) {
    deps.log(`turn ${turnId} was taken over by another server instance; stopped here without recording its end`);
    return run.release();
  }
  // Only a database fault is tolerated here: anything else is a bug, said as before.
  const tolerate = (err: unknown) => {
    if (!isDatabaseFault(err)) throw err;
  };
  try {
    // Refused, the calls stay unanswered in the history, and loading it answers them (answerOrphans).
    if (end.openCalls) await closeOpenCalls(db, sessionId, turnId, why).catch(tolerate);
    const errorEvent: SessionEventBody | undefined = end.error && {
      type: "error",
      turnId,
      code: end.error.code,
      message: end.error.message,
    };
    const told = errorEvent ? [{ body: errorEvent, stored: stored(hub.publish(sessionId, errorEvent)) }] : [];
    await emitted();
    const row: TurnEnd = {
      turnId,
      sessionId,
      instanceId: run.instanceId,
      status: end.status,
      stopReason: end.stopReason ?? null,
      error: end.error?.message ?? null,
      usage: end.usage,
      sessionStatus: end.status === "interrupted" ? "interrupted" : "idle",
    };
    let ended: boolean | undefined;
    try {
      ended = await deps.rows.end(row);
    } catch (err) {
      tolerate(err);
    }
    const finished: SessionEventBody = {
      type: "turn.finished",
      turnId,
      status: end.status,
      ...(end.stopReason ? { stopReason: end.stopReason } : {}),
    };
    if (ended === false) {
      run.release();
      deps.log(`turn ${turnId} was taken over by another server instance before it ended here; its end is theirs`);
      return;
    }
    // turn.finished goes out after the release (its comment in turn.ts says why); the end the
    // database refused is handed over before it, so the next send finds it and records it first.
    let published!: (stored: Promise<boolean>) => void;
    const fin = { body: finished, stored: new Promise<boolean>((r) => (published = (p) => void p.then(r))) };
    if (ended === undefined) deps.unrecorded(sessionId, { end: row, events: [...told, fin] });
    run.release();
    published(stored(hub.publish(sessionId, finished)));
    if (ended === true && !((await fin.stored) && (told.length === 0 || (await told[0].stored))))
      deps.unrecorded(sessionId, { events: [...told, fin] });
  } catch (err) {
    deps.log(`turn ${turnId} could not be closed cleanly; start-up recovery will mark it interrupted`, err);
  }
}
