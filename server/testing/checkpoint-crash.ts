// A real server process's restore, rewind or undo stopped at one state change and killed -9
// (services/rewind-crash-child.ts), and the session it works on: for the crash tests of
// checkpoints and rewinds (services/rewind-crash.test.ts, services/stopped-recovery.test.ts).
import type { Db } from "../db";
import { seedSession } from "./pipeline";
import { runUntilStopped } from "./stopped-child";

export interface StoppedAt {
  /** Its cluster instance's id (with `cluster`). */
  instanceId?: string;
  /** SIGKILL, then its exit. */
  kill9(): Promise<void>;
}

/** Runs the child until it says it stopped at `stop` (still alive, waiting to be killed). */
export async function stopChildAt(
  url: string,
  sessionId: string,
  turnId: string,
  action: string,
  stop: string,
  opts: { cluster?: boolean } = {},
): Promise<StoppedAt> {
  const child = await runUntilStopped(
    "server/services/rewind-crash-child.ts",
    [url, sessionId, turnId, action, stop],
    `stopped ${stop}`,
    { ...process.env, QUIVER_CRASH_CLUSTER: opts.cluster ? "1" : "" },
  );
  return { instanceId: /instance (\S+)/.exec(child.out)?.[1], kill9: child.kill9 };
}

/** Runs the child until it stopped at `stop`, then kills it -9. */
export async function crashAt(url: string, sessionId: string, turnId: string, action: string, stop: string) {
  await (await stopChildAt(url, sessionId, turnId, action, stop)).kill9();
}

/** A session with two finished turns, the first with a `before` checkpoint to restore to. */
export async function seedTurns(db: Db): Promise<{ sessionId: string; turnIds: string[] }> {
  const { session } = await seedSession(db);
  const t1 = await db.turn.create({ data: { sessionId: session.id, status: "done", startedAt: new Date(1000) } });
  const t2 = await db.turn.create({ data: { sessionId: session.id, status: "done", startedAt: new Date(2000) } });
  await db.checkpoint.create({
    data: { sessionId: session.id, turnId: t1.id, phase: "before", commit: "a".repeat(40), createdAt: new Date(1000) },
  });
  return { sessionId: session.id, turnIds: [t1.id, t2.id] };
}
