// A restore's way back, kept whatever becomes of its answer. The workspace as it is is recorded
// (a `restore-undo` checkpoint row) before the runner is asked to restore, so that an answer lost
// to the runner's connection, its deadline or this server's end still leaves the person an Undo:
// restoring to that row puts every file back as it was, whatever the restore did. The row is
// published only once the outcome is known or known to be unknown; the runner's own undo commit
// (which also records the permission bits of the files it changed) replaces the provisional one
// when the answer comes, and a refusal (nothing was changed) removes it. Until its events are
// stored the row's phase is `restore-pending:<target>`: a server killed in between leaves it so,
// and the next start (recoverRestores) announces it as a restore whose answer was lost.
import type { Db } from "../db";
import type { SessionEventBody } from "../protocol/events";
import type { CheckpointRestored } from "../protocol/checkpoint-ops";
import type { RestoreResult } from "./checkpoints";

export interface UndoDeps {
  db: Db;
  publish(sessionId: string, body: SessionEventBody): Promise<unknown>;
}

/** The phase of an undo row whose events are not stored yet; the restore's target follows it. */
export const PENDING_UNDO = "restore-pending:";

export interface ProvisionalUndo {
  id: string;
  sessionId: string;
  turnId: string;
  /** The checkpoint restored to. */
  targetId: string;
}

/** Records `commit` (the workspace now) as the undo of a restore about to be asked for. */
export async function recordUndo(
  deps: UndoDeps,
  at: Omit<ProvisionalUndo, "id">,
  made: { commit: string; filesChanged: number },
): Promise<ProvisionalUndo> {
  const row = await deps.db.checkpoint.create({
    data: { sessionId: at.sessionId, turnId: at.turnId, phase: `${PENDING_UNDO}${at.targetId}`, ...made },
  });
  return { ...at, id: row.id };
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
  await deps.db.checkpoint.update({
    where: { id: undo.id },
    data: { commit: done.undoCommit, filesChanged: done.changes.length },
  });
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
  await announce(deps, undo, 0, [], { code: "checkpoint.unknown", text });
  return { changes: [], kept: [], undoCheckpointId: undo.id, unknown: text };
}

/** The restore was refused or never reached the runner: nothing changed, so there is nothing to undo. */
export async function dropUndo(deps: UndoDeps, undo: ProvisionalUndo): Promise<void> {
  await deps.db.checkpoint.delete({ where: { id: undo.id } }).catch(() => undefined);
}

/** Undo rows a stopped server left pending (made before `before`: a live instance's restore may
 *  still be under way after it): each is announced as a restore whose answer was lost, unless
 *  its events were stored before the stop, and is then a `restore-undo` like any other. */
export async function recoverRestores(deps: UndoDeps, before: Date): Promise<number> {
  const rows = await deps.db.checkpoint.findMany({
    where: { phase: { startsWith: PENDING_UNDO }, createdAt: { lt: before } },
    orderBy: { createdAt: "asc" },
  });
  for (const row of rows) {
    const undo = {
      id: row.id,
      sessionId: row.sessionId,
      turnId: row.turnId ?? "",
      targetId: row.phase.slice(PENDING_UNDO.length),
    };
    const told = await deps.db.sessionEvent.findMany({
      where: { sessionId: row.sessionId, type: "checkpoint.restored" },
      select: { payload: true },
    });
    if (told.some((e) => (e.payload as { undoCheckpointId?: string } | null)?.undoCheckpointId === row.id))
      await settle(deps, undo);
    else await outcomeUnknown(deps, undo, "the server stopped before it came");
  }
  return rows.length;
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
