// Restores and rewinds a stopped server committed without their events, announced without
// waiting for another restart. A restore's pending undo row names its instance, so it is taken
// over as soon as that instance is not live: at this start, and when a peer's heartbeat stops
// (`peersGone`). A rewind's rows name no instance, and their events follow within milliseconds,
// so one older than any live instance's rewind can still be (AGE_MS) is announced at this start
// and by a sweep each minute over the window since the last one. Alone (SQLite: one instance per
// database) everything at this start is a stopped server's, and nothing is swept; that includes
// a project's delete stopped between marking its workspaces `deleting` and deleting its rows:
// they are made usable again, as a refused delete leaves them (projects.ts), instead of refusing
// their sessions as "being deleted" for good. With peers the mark names its instance, and is
// taken off like a restore once that instance is not live (a mark naming none, made before
// marks named one, stays until the project is deleted again).
import type { Db } from "../db";
import type { SessionEventBody } from "../protocol/events";
import { recoverRestores } from "./checkpoint-undo";
import type { RewindService } from "./rewind";

/** Longer than a restore's runner deadline (checkpoints.ts) and any rewind's commit-to-event. */
export const AGE_MS = 180_000;
const SWEEP_MS = 60_000;

export interface StoppedRecoveryDeps {
  db: Db;
  publish(sessionId: string, body: SessionEventBody): Promise<unknown>;
  rewinds: Pick<RewindService, "recover">;
  /** With peers: this instance's id and the ids of the live ones (this one included). */
  cluster?: { id: string; liveInstances(): Promise<string[]> };
  log(message: string): void;
  sweepMs?: number;
  ageMs?: number;
}

export interface StoppedRecovery {
  /** At start: everything a stopped server left that no live instance may still be finishing. */
  atStart(): Promise<number>;
  /** These instances' heartbeats stopped: their restores are taken over now. */
  peersGone(ids: string[]): Promise<number>;
  dispose(): Promise<void>;
}

export function startStoppedRecovery(deps: StoppedRecoveryDeps): StoppedRecovery {
  const { cluster } = deps;
  const ageMs = deps.ageMs ?? AGE_MS;
  const undo = { db: deps.db, publish: deps.publish, instanceId: cluster?.id };
  let swept = new Date(Date.now() - ageMs);
  let running: Promise<unknown> = Promise.resolve();
  let disposed = false;

  /** Workspaces a stopped server's project delete marked `deleting` and left, made usable again. */
  async function releaseDeleting(isGone: (owner: string) => boolean): Promise<void> {
    const marked = await deps.db.workspace.findMany({
      where: { state: "deleting" },
      select: { id: true, deletingBy: true },
    });
    const ids = marked.filter((w) => !cluster || (w.deletingBy !== null && isGone(w.deletingBy))).map((w) => w.id);
    if (!ids.length) return;
    const { count } = await deps.db.workspace.updateMany({
      where: { id: { in: ids }, state: "deleting" },
      data: { state: "creating", error: null, deletingBy: null },
    });
    if (count) deps.log(`${count} workspace(s) of a project delete the server stopped in are usable again`);
  }

  /** One recovery at a time: a sweep and a peer's end never announce one row twice. */
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = running.then(fn, fn);
    running = run.catch(() => undefined);
    return run;
  };

  const ownerGone = async () => {
    if (!cluster) return () => true;
    const live = new Set(await cluster.liveInstances());
    return (owner: string) => !live.has(owner);
  };

  async function sweep(): Promise<void> {
    const before = new Date(Date.now() - ageMs);
    // Overlapping the last window: a row's createdAt is taken a moment before its commit.
    const since = new Date(swept.getTime() - SWEEP_MS);
    const told = await deps.rewinds.recover(before, since);
    swept = before;
    if (told) deps.log(`announced ${told} rewind(s) a stopped instance left unannounced`);
  }

  const timer =
    cluster &&
    setInterval(() => {
      if (!disposed)
        serial(sweep).catch((e: Error) => deps.log(`sweeping for unannounced rewinds failed: ${e.message}`));
    }, deps.sweepMs ?? SWEEP_MS);
  if (timer) timer.unref();

  return {
    atStart: () =>
      serial(async () => {
        const before = new Date(Date.now() - (cluster ? ageMs : 0));
        const told =
          (await recoverRestores(undo, { before, ownerGone: await ownerGone() })) +
          (await deps.rewinds.recover(before));
        await releaseDeleting(await ownerGone());
        return told;
      }),
    peersGone: (ids) =>
      serial(async () => {
        const gone = new Set(ids);
        const told = await recoverRestores(undo, { before: new Date(0), ownerGone: (owner) => gone.has(owner) });
        if (told) deps.log(`announced ${told} restore(s) of gone instance(s) ${ids.join(", ")}`);
        await releaseDeleting((owner) => gone.has(owner));
        return told;
      }),
    async dispose() {
      disposed = true;
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
