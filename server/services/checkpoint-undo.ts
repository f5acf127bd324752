// A restore's way back, kept whatever becomes of its answer. The workspace as it is is recorded
// (a `restore-undo` checkpoint row) before the runner is asked to restore, so that an answer lost
// to the runner's connection, its deadline or this server's end still leaves the person an Undo:
// restoring to that row puts every file back as it was, whatever the restore did. The row is
// published only once the outcome is known or known to be unknown; the runner's own undo commit
// (which also records the permission bits of the files it changed) replaces the provisional one
// when the answer comes, and a refusal (nothing was changed) removes it. Until its events are
// stored the row's phase is `restore-pending:<target>@<instance>`: a server killed in between
// leaves it so, and recoverRestores announces it as a restore whose answer was lost once that
// instance is gone — at the next start, or when a live peer sees its heartbeat stop
// (parts.ts) — never while it lives, however long its runner takes. Recovering first takes the
// row over (a conditional update), so of several peers noticing at once one announces it, and
// an owner that only stalled finds its row taken and announces nothing twice.
import type { Db } from "../db";
import type { SessionEventBody } from "../protocol/events";
import type { CheckpointRestored } from "../protocol/checkpoint-ops";
import type { RestoreResult } from "./checkpoints";

export interface UndoDeps {
  db: Db;
  publish(sessionId: string, body: SessionEventBody): Promise<unknown>;
  /** This server instance among peers (hub/cluster.ts); none with SQLite (one instance). */
  instanceId?: string;
}

/** The phase of an undo row whose events are not stored yet; the restore's target follows it,
 *  then `@` and the instance that owns it (none: a single server's, or one before owners). */
export const PENDING_UNDO = "restore-pending:";

export interface ProvisionalUndo {
  id: string;
  sessionId: string;
  turnId: string;
  /** The checkpoint restored to. */
  targetId: string;
  /** The row's phase while this instance owns it. */
  phase: string;
}

const pendingPhase = (targetId: string, owner: string | undefined) =>
  `${PENDING_UNDO}${targetId}${owner ? `@${owner}` : ""}`;

function parsePending(phase: string): { targetId: string; owner?: string } {
  const [targetId, owner] = phase.slice(PENDING_UNDO.length).split("@");
  return owner ? { targetId, owner } : { targetId };
}

/** Records `commit` (the workspace now) as the undo of a restore about to be asked for. */
export async function recordUndo(
  deps: UndoDeps,
  at: Omit<ProvisionalUndo, "id" | "phase">,
  made: { commit: string; filesChanged: number },
): Promise<ProvisionalUndo> {
  const phase = pendingPhase(at.targetId, deps.instanceId);
  const row = await deps.db.checkpoint.create({ data: { sessionId: at.sessionId, turnId: at.turnId, phase, ...made } });
  return { ...at, id: row.id, phase };
}

/** The restore answered: its own undo replaces the provisional one, and the session hears of both. */
export async function restored(
  deps: UndoDeps,
  undo: ProvisionalUndo,
  done: CheckpointRestored,
): Promise<RestoreResult> {
  if (!done.undoCommit) {
    await dropUndo(deps, undo);
    return { changes: done.changes, kept: done.kept };
  }
  // Taken over by a peer that thought this instance gone: it announced the restore as lost, and
  // the provisional commit it kept is as good an Undo.
  const { count } = await deps.db.checkpoint.updateMany({
    where: { id: undo.id, phase: undo.phase },
    data: { commit: done.undoCommit, filesChanged: done.changes.length },
  });
  if (count === 0) return { changes: done.changes, kept: done.kept, undoCheckpointId: undo.id };
  const partial = done.failed?.length
    ? `Restored ${done.changes.length - done.failed.length} of ${done.changes.length} file(s); not restored: ${done.failed
        .slice(0, 20)
        .map((f) => `${f.path} (${f.reason})`)
        .join(
          "; ",
        )}${done.failed.length > 20 ? ` and ${done.failed.length - 20} more` : ""}. Undo puts back what was restored.`
    : undefined;
  await announce(
    deps,
    undo,
    done.changes.length,
    done.changes.map((c) => c.path),
    partial ? { code: "checkpoint.partial", text: partial } : undefined,
  );
  return {
    changes: done.changes,
    kept: done.kept,
    undoCheckpointId: undo.id,
    ...(done.failed?.length ? { failed: done.failed } : {}),
  };
}

/** The restore was asked for and its answer never came: which files changed is not known. */
export async function outcomeUnknown(deps: UndoDeps, undo: ProvisionalUndo, why: string): Promise<RestoreResult> {
  const text = `The restore's answer was lost (${why}): which files it changed is not known. Undo puts every file back as it was before the restore.`;
  if (await owns(deps, undo)) await announce(deps, undo, 0, [], { code: "checkpoint.unknown", text });
  return { changes: [], kept: [], undoCheckpointId: undo.id, unknown: text };
}

/** The restore was refused or never reached the runner: nothing changed, so there is nothing to undo. */
export async function dropUndo(deps: UndoDeps, undo: ProvisionalUndo): Promise<void> {
  // Not once a peer took it over: it announced this row as the restore's Undo.
  await deps.db.checkpoint.deleteMany({ where: { id: undo.id, phase: undo.phase } }).catch(() => undefined);
}

/** Which pending rows a stopped server left: those of an owner gone (`ownerGone`), and those
 *  without one made before `before` (a single server's start: all; with peers, only those older
 *  than any live instance's restore can still be). */
export interface StaleUndos {
  before: Date;
  ownerGone?(owner: string): boolean;
}

/** Undo rows a stopped server left pending: each is announced as a restore whose answer was
 *  lost, unless its events were stored before the stop, and is then a `restore-undo` like any
 *  other. Answers how many this call took over. */
export async function recoverRestores(deps: UndoDeps, stale: Date | StaleUndos): Promise<number> {
  const { before, ownerGone } = stale instanceof Date ? { before: stale } : stale;
  const rows = await deps.db.checkpoint.findMany({
    where: { phase: { startsWith: PENDING_UNDO } },
    orderBy: { createdAt: "asc" },
  });
  let recovered = 0;
  for (const row of rows) {
    const { targetId, owner } = parsePending(row.phase);
    if (owner ? owner === deps.instanceId || !ownerGone?.(owner) : row.createdAt >= before) continue;
    // Taken over first: of several instances recovering at once, one announces it.
    const phase = pendingPhase(targetId, deps.instanceId);
    const { count } = await deps.db.checkpoint.updateMany({ where: { id: row.id, phase: row.phase }, data: { phase } });
    if (count === 0) continue;
    recovered++;
    const undo = { id: row.id, sessionId: row.sessionId, turnId: row.turnId ?? "", targetId, phase };
    const told = await deps.db.sessionEvent.findMany({
      where: { sessionId: row.sessionId, type: "checkpoint.restored" },
      select: { payload: true },
    });
    if (told.some((e) => (e.payload as { undoCheckpointId?: string } | null)?.undoCheckpointId === row.id))
      await settle(deps, undo);
    else await outcomeUnknown(deps, undo, "the server stopped before it came");
  }
  return recovered;
}

/** Whether this instance still owns the pending row (no peer took it over). */
async function owns(deps: UndoDeps, undo: ProvisionalUndo): Promise<boolean> {
  return (await deps.db.checkpoint.count({ where: { id: undo.id, phase: undo.phase } })) === 1;
}

async function settle(deps: UndoDeps, undo: ProvisionalUndo): Promise<void> {
  await deps.db.checkpoint.update({ where: { id: undo.id }, data: { phase: "restore-undo" } });
}

/** The session hears of the undo (and of `notice`), and only then is the row no longer pending. */
async function announce(
  deps: UndoDeps,
  undo: ProvisionalUndo,
  filesChanged: number,
  paths: string[],
  notice?: { code: string; text: string },
): Promise<void> {
  await deps.publish(undo.sessionId, {
    type: "checkpoint.created",
    checkpointId: undo.id,
    turnId: undo.turnId,
    phase: "restore-undo",
    filesChanged,
  });
  await deps.publish(undo.sessionId, {
    type: "checkpoint.restored",
    checkpointId: undo.targetId,
    undoCheckpointId: undo.id,
    paths,
  });
  if (notice) await deps.publish(undo.sessionId, { type: "notice", level: "warn", ...notice });
  await settle(deps, undo);
}
