// Turn ends the database refused (engine/finish.ts: a full disk, a read-only database), kept in
// memory by session and written once it takes writes again: the turn row's end and the session's
// status, then the events the live stream showed but the log did not keep (the error, then
// turn.finished), so a reload shows how the turn ended. Written before the session's next turn
// begins (its send waits for it: the old row would otherwise still read `running`), at a cancel,
// and every few seconds by a timer of its own while any is left. A restart loses them, and then
// start-up recovery marks the turn interrupted instead (recovery.ts).
import type { TurnRows } from "../db";
import type { EventHub } from "../hub/events";
import type { Unrecorded } from "./finish";

const RETRY_MS = 3_000;

export interface LateEnds {
  add(sessionId: string, what: Unrecorded): void;
  has(sessionId: string): boolean;
  /** Writes what the session has left; rejects with the database's error when it still refuses. */
  settle(sessionId: string): Promise<void>;
  /** One last try for each, then the timer stops. */
  dispose(): Promise<void>;
}

export function lateEnds(deps: { rows: TurnRows; hub: EventHub; log(m: string, e?: unknown): void }): LateEnds {
  const left = new Map<string, Unrecorded>();
  const writing = new Map<string, Promise<void>>();
  let timer: NodeJS.Timeout | undefined;

  async function write(sessionId: string, u: Unrecorded) {
    if (u.end) {
      await deps.rows.end(u.end);
      deps.log(`turn ${u.end.turnId} recorded as ${u.end.status} now that the database takes writes again`);
      u.end = undefined;
    }
    while (u.events.length > 0) {
      const e = u.events[0];
      // One that went out live and was stored after all (the fault had cleared) is not repeated.
      if (!(e.stored && (await e.stored))) await deps.hub.publish(sessionId, e.body);
      u.events.shift();
    }
    if (left.get(sessionId) === u) left.delete(sessionId);
    if (left.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  }

  function settle(sessionId: string): Promise<void> {
    const u = left.get(sessionId);
    if (!u) return Promise.resolve();
    let p = writing.get(sessionId);
    if (!p) {
      p = write(sessionId, u).finally(() => writing.delete(sessionId));
      writing.set(sessionId, p);
    }
    return p;
  }

  return {
    add(sessionId, what) {
      const u = left.get(sessionId);
      if (u) {
        u.end = what.end ?? u.end;
        u.events.push(...what.events);
      } else left.set(sessionId, { end: what.end, events: [...what.events] });
      timer ??= setInterval(() => {
        for (const id of left.keys()) void settle(id).catch(() => undefined);
      }, RETRY_MS).unref();
    },
    has: (sessionId) => left.has(sessionId),
    settle,
    async dispose() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await Promise.allSettled([...left.keys()].map(settle));
    },
  };
}
