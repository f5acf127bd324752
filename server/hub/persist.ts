// Write-behind of one session's events: numbered events queue here and are written to
// SessionEvent in order, many per statement, one statement at a time. Until an event's write
// commits it stays readable from `unwritten()`, which is how a resuming subscriber sees it.
import type { Db } from "../db";
import type { SessionEvent } from "../protocol/events";

export interface WriteQueue {
  push(ev: SessionEvent, resolve: (ev: SessionEvent) => void, reject: (err: unknown) => void): void;
  /** Numbered but not yet committed, in seq order (a copy). */
  unwritten(): SessionEvent[];
  /** Resolves when everything pushed so far is written (or given up on). */
  drain(): Promise<void>;
}

const ATTEMPTS = 3;

export function persistBehind(db: Db, sessionId: string, batchSize: number, log: (m: string, e?: unknown) => void): WriteQueue {
  const queue: { ev: SessionEvent; resolve: (ev: SessionEvent) => void; reject: (err: unknown) => void }[] = [];
  let writing: Promise<void> | undefined;

  async function run() {
    while (queue.length > 0) {
      const batch = queue.slice(0, batchSize);
      let error: unknown;
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        try {
          await db.sessionEvent.createMany({
            data: batch.map(({ ev }) => {
              const { seq, sessionId: _s, at, ...body } = ev;
              return { sessionId, seq, type: ev.type, payload: body as object, createdAt: new Date(at) };
            }),
          });
          error = undefined;
          break;
        } catch (err) {
          error = err;
          await new Promise((r) => setTimeout(r, 50 * attempt));
        }
      }
      // Only now may the events leave the readable tail.
      queue.splice(0, batch.length);
      if (error) {
        log(`${batch.length} event(s) of session ${sessionId} could not be written (seq ${batch[0].ev.seq}..${batch.at(-1)!.ev.seq})`, error);
        for (const b of batch) b.reject(error);
      } else for (const b of batch) b.resolve(b.ev);
    }
    writing = undefined;
  }

  return {
    push(ev, resolve, reject) {
      queue.push({ ev, resolve, reject });
      writing ??= run();
    },
    unwritten: () => queue.map((q) => q.ev),
    drain: async () => {
      while (writing) await writing;
    },
  };
}
