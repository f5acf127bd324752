// Checkpoints of a session's workspace (issue 27): the runner keeps the snapshots (commits of
// its shadow repository, runner/checkpoints/), the database which is which (Checkpoint rows),
// and the session's stream hears of each (checkpoint.created, checkpoint.restored,
// hunk.reviewed). A turn's first change is preceded by a `before` checkpoint (checkpoint-hooks.ts
// calls beforeChange as a mutating call is about to run), and a turn that had one gets an
// `after` when it ends; a restore first records the files as they are (`restore-undo`,
// checkpoint-undo.ts), before the runner is asked, so that a lost answer still leaves an Undo.
import { randomUUID } from "node:crypto";
import type { Db } from "../db";
import { ExecutorUnavailableError, type Executor } from "../executors/contract";
import type { SessionEventBody } from "../protocol/events";
import {
  CHECKPOINT_CREATE_OP,
  CHECKPOINT_DIFF_OP,
  CHECKPOINT_HUNK_OP,
  CHECKPOINT_RESTORE_OP,
  CheckpointCreated,
  CheckpointDiffMeta,
  CheckpointRestored,
  type RestoreChange,
} from "../protocol/checkpoint-ops";
import { parseHunks } from "./checkpoint-hunks";
import { dropUndo, outcomeUnknown, PENDING_UNDO, recordUndo, restored } from "./checkpoint-undo";
import { logFn } from "../log";

export type CheckpointErrorCode = "NOT_FOUND" | "CONFLICT" | "PRECONDITION_FAILED" | "BAD_REQUEST";

export class CheckpointError extends Error {
  constructor(
    readonly code: CheckpointErrorCode,
    message: string,
    /** The runner was asked and its answer never came: what it did is not known. */
    readonly outcomeUnknown = false,
  ) {
    super(message);
    this.name = "CheckpointError";
  }
}

export type Phase = "before" | "after" | "restore-undo";

export interface CheckpointView {
  id: string;
  turnId: string;
  turnIndex: number;
  phase: Phase;
  createdAt: string;
  filesChanged: number;
}

export interface HunkView {
  id: string;
  header: string;
  lines: string[];
  state: "open" | "accepted" | "reverted";
}

export interface FileDiffView {
  path: string;
  status: "added" | "modified" | "deleted";
  binary: boolean;
  hunks: HunkView[];
}

export interface RestoreResult {
  changes: RestoreChange[];
  kept: string[];
  undoCheckpointId?: string;
  /** Files among `changes` that could not be restored, with why (the rest was; Undo undoes that). */
  failed?: { path: string; reason: string }[];
  /** The runner's answer was lost: why, and that Undo (undoCheckpointId) puts every file back. */
  unknown?: string;
}

export interface RestoreRequest {
  sessionId: string;
  turnId?: string;
  checkpointId?: string;
  dryRun: boolean;
  keepUserEdits?: boolean;
}

export interface CheckpointService {
  list(sessionId: string): Promise<{ checkpoints: CheckpointView[] }>;
  diff(sessionId: string, turnId?: string): Promise<{ files: FileDiffView[] }>;
  acceptHunk(sessionId: string, turnId: string | undefined, path: string, hunkId: string): Promise<{ ok: true }>;
  revertHunk(
    sessionId: string,
    turnId: string | undefined,
    path: string,
    hunkId: string,
  ): Promise<{ ok: true; path: string }>;
  restore(req: RestoreRequest): Promise<RestoreResult>;
  /** A mutating call of the session's running turn is about to run: its `before` checkpoint, once per turn. */
  beforeChange(sessionId: string): Promise<void>;
  /** The turn started (so beforeChange knows it without asking the database). */
  turnStarted(sessionId: string, turnId: string): void;
  /** The turn ended: its `after` checkpoint when it had a `before`, taken once `published` settles
   *  (the next turn's `before` waits for it: registered before this returns its promise). */
  turnEnded(sessionId: string, turnId: string, published?: Promise<unknown>): Promise<void>;
  /** Refuses with PRECONDITION_FAILED while one of the session's turns runs. */
  assertIdle(sessionId: string, what: string): Promise<void>;
}

export interface CheckpointDeps {
  db: Db;
  runner: Pick<Executor, "run">;
  publish(sessionId: string, body: SessionEventBody): Promise<unknown>;
  /** Whether this server runs a turn of the session now (the database is asked too). */
  isRunning?(sessionId: string): boolean;
  log?(message: string): void;
  /** This server instance among peers: a restore's pending undo row names it (checkpoint-undo.ts). */
  instanceId?: string;
}

const TIMEOUT_MS = 120_000;
const SESSION_SCOPE = "session";

export function createCheckpointService(deps: CheckpointDeps): CheckpointService {
  const { db } = deps;
  const log = deps.log ?? logFn("checkpoints");
  /** The running turn of each session as the engine announced it. */
  const current = new Map<string, string>();
  /** A turn's `before` being made or made (by turn id): made once even when calls race. */
  const befores = new Map<string, Promise<void>>();
  /** Each session's `after` being taken: the next turn's `before` comes after it. */
  const afters = new Map<string, Promise<void>>();

  async function call(sessionId: string, op: string, input: unknown): Promise<{ output: string; meta: unknown }> {
    let r;
    try {
      r = await deps.runner.run({
        sessionId,
        callId: `cp_${randomUUID()}`,
        op,
        input,
        deadline: Date.now() + TIMEOUT_MS,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new CheckpointError(
        "PRECONDITION_FAILED",
        `The workspace's runner cannot be reached: ${(err as Error).message}`,
        // Sent, and then the runner went away or the deadline passed: it may have done it.
        err instanceof ExecutorUnavailableError && err.started,
      );
    }
    if (!r.ok)
      throw new CheckpointError(
        (r.meta as { conflict?: boolean } | undefined)?.conflict ? "CONFLICT" : "PRECONDITION_FAILED",
        r.output,
      );
    return { output: r.output, meta: r.meta };
  }

  async function latestCommit(sessionId: string): Promise<string | undefined> {
    const row = await db.checkpoint.findFirst({
      where: { sessionId },
      orderBy: { createdAt: "desc" },
      select: { commit: true },
    });
    return row?.commit;
  }

  async function create(sessionId: string, turnId: string, phase: Phase): Promise<{ id: string; commit: string }> {
    const parent = await latestCommit(sessionId);
    const { meta } = await call(sessionId, CHECKPOINT_CREATE_OP, parent ? { parent } : {});
    const made = CheckpointCreated.parse(meta);
    const row = await db.checkpoint.create({
      data: { sessionId, turnId, phase, commit: made.commit, filesChanged: made.filesChanged },
    });
    await deps.publish(sessionId, {
      type: "checkpoint.created",
      checkpointId: row.id,
      turnId,
      phase,
      filesChanged: made.filesChanged,
    });
    if (made.skipped.length) {
      const names = made.skipped
        .slice(0, 5)
        .map((s) => s.path)
        .join(", ");
      await deps.publish(sessionId, {
        type: "notice",
        level: "info",
        code: "checkpoint.skipped",
        text: `Left out of the checkpoint for their size: ${names}${made.skipped.length > 5 ? ` and ${made.skipped.length - 5} more` : ""}.`,
      });
    }
    return { id: row.id, commit: made.commit };
  }

  async function runningTurn(sessionId: string): Promise<string | undefined> {
    const known = current.get(sessionId);
    if (known) return known;
    const row = await db.turn.findFirst({
      where: { sessionId, status: "running" },
      orderBy: { startedAt: "desc" },
      select: { id: true },
    });
    return row?.id;
  }

  async function turnOf(sessionId: string, turnId: string) {
    const turn = await db.turn.findFirst({ where: { id: turnId, sessionId }, select: { id: true, startedAt: true } });
    if (!turn) throw new CheckpointError("NOT_FOUND", `No turn ${turnId} in this session.`);
    return turn;
  }

  /** The commits a diff compares: a turn's before → its after (or now), or the session's first before → now. */
  async function range(sessionId: string, turnId?: string): Promise<{ from: string; to?: string } | undefined> {
    if (turnId) {
      await turnOf(sessionId, turnId);
      const rows = await db.checkpoint.findMany({
        where: { sessionId, turnId, phase: { in: ["before", "after"] } },
        orderBy: { createdAt: "asc" },
      });
      const before = rows.find((r) => r.phase === "before");
      if (!before) return undefined;
      const after = rows.filter((r) => r.phase === "after").at(-1);
      return { from: before.commit, to: after?.commit };
    }
    const first = await db.checkpoint.findFirst({
      where: { sessionId, phase: "before" },
      orderBy: { createdAt: "asc" },
    });
    return first ? { from: first.commit } : undefined;
  }

  async function rawDiff(sessionId: string, turnId: string | undefined, paths?: string[]) {
    await afters.get(sessionId);
    const r = await range(sessionId, turnId);
    if (!r) return [];
    const { meta } = await call(sessionId, CHECKPOINT_DIFF_OP, {
      from: r.from,
      ...(r.to ? { to: r.to } : {}),
      ...(paths ? { paths } : {}),
    });
    const files = (meta as { files?: { patch?: string }[] }).files ?? [];
    const parsed = CheckpointDiffMeta.parse(meta);
    return parsed.files.map((f, i) => ({ ...f, hunks: f.binary ? [] : parseHunks(files[i]?.patch ?? "") }));
  }

  async function findHunk(sessionId: string, turnId: string | undefined, path: string, hunkId: string) {
    const file = (await rawDiff(sessionId, turnId, [path])).find((f) => f.path === path);
    const hunk = file?.hunks.find((h) => h.id === hunkId);
    if (!hunk)
      throw new CheckpointError(
        "NOT_FOUND",
        `No hunk ${hunkId} in ${path} among the agent's changes${turnId ? " of that turn" : ""} (it may have changed since the view was loaded: reload it).`,
      );
    return hunk;
  }

  async function review(
    sessionId: string,
    turnId: string | undefined,
    path: string,
    hunkId: string,
    state: "accepted" | "reverted",
  ) {
    const scope = turnId ?? SESSION_SCOPE;
    await db.hunkReview.upsert({
      where: { sessionId_scope_path_hunkId: { sessionId, scope, path, hunkId } },
      create: { sessionId, scope, path, hunkId, state },
      update: { state },
    });
    await deps.publish(sessionId, { type: "hunk.reviewed", ...(turnId ? { turnId } : {}), path, hunkId, state });
  }

  const service: CheckpointService = {
    async list(sessionId) {
      await afters.get(sessionId);
      const [rows, turns] = await Promise.all([
        // A pending undo is not the session's until its restore is announced (checkpoint-undo.ts).
        db.checkpoint.findMany({
          where: { sessionId, NOT: { phase: { startsWith: PENDING_UNDO } } },
          orderBy: { createdAt: "asc" },
        }),
        db.turn.findMany({ where: { sessionId }, orderBy: { startedAt: "asc" }, select: { id: true } }),
      ]);
      const index = new Map(turns.map((t, i) => [t.id, i + 1]));
      return {
        checkpoints: rows.map((r) => ({
          id: r.id,
          turnId: r.turnId ?? "",
          turnIndex: (r.turnId && index.get(r.turnId)) || 0,
          phase: r.phase as Phase,
          createdAt: r.createdAt.toISOString(),
          filesChanged: r.filesChanged,
        })),
      };
    },

    async diff(sessionId, turnId) {
      const files = await rawDiff(sessionId, turnId);
      const reviews = await db.hunkReview.findMany({ where: { sessionId, scope: turnId ?? SESSION_SCOPE } });
      const state = new Map(reviews.map((r) => [`${r.path}\0${r.hunkId}`, r.state as "accepted" | "reverted"]));
      return {
        files: files.map((f) => ({
          path: f.path,
          status: f.status,
          binary: f.binary,
          hunks: f.hunks.map((h) => ({
            id: h.id,
            header: h.header,
            lines: h.lines.filter((l) => !l.startsWith("\\")),
            state: state.get(`${f.path}\0${h.id}`) ?? "open",
          })),
        })),
      };
    },

    async acceptHunk(sessionId, turnId, path, hunkId) {
      await findHunk(sessionId, turnId, path, hunkId);
      await review(sessionId, turnId, path, hunkId, "accepted");
      return { ok: true };
    },

    async revertHunk(sessionId, turnId, path, hunkId) {
      const hunk = await findHunk(sessionId, turnId, path, hunkId);
      const { meta } = await call(sessionId, CHECKPOINT_HUNK_OP, { path, newStart: hunk.newStart, lines: hunk.lines });
      await review(sessionId, turnId, path, hunkId, "reverted");
      return { ok: true, path: (meta as { path?: string } | undefined)?.path ?? path };
    },

    async restore(req) {
      const { sessionId } = req;
      await afters.get(sessionId);
      let target: { id: string; commit: string; turnId: string | null } | null = null;
      if (req.checkpointId) {
        target = await db.checkpoint.findFirst({ where: { id: req.checkpointId, sessionId } });
        if (!target) throw new CheckpointError("NOT_FOUND", `No checkpoint ${req.checkpointId} in this session.`);
      } else if (req.turnId) {
        const turn = await turnOf(sessionId, req.turnId);
        // Before turn T: its own `before`, or (T changed nothing) the first `before` of a later turn.
        target = await db.checkpoint.findFirst({
          where: { sessionId, phase: "before", createdAt: { gte: turn.startedAt } },
          orderBy: { createdAt: "asc" },
        });
        if (!target) return { changes: [], kept: [] };
      } else
        throw new CheckpointError(
          "BAD_REQUEST",
          "Name the turn (turnId) or the checkpoint (checkpointId) to restore to.",
        );
      const keepPersonEdits = req.keepUserEdits ?? true;
      const input = { to: target.commit, dryRun: req.dryRun, keepPersonEdits };
      if (req.dryRun) {
        const done = CheckpointRestored.parse((await call(sessionId, CHECKPOINT_RESTORE_OP, input)).meta);
        return { changes: done.changes, kept: done.kept };
      }
      await service.assertIdle(sessionId, "Files cannot be restored");
      const turnId = req.turnId ?? target.turnId ?? "";
      const parent = await latestCommit(sessionId);
      const now = CheckpointCreated.parse((await call(sessionId, CHECKPOINT_CREATE_OP, parent ? { parent } : {})).meta);
      const undo = await recordUndo(
        deps,
        { sessionId, turnId, targetId: target.id },
        {
          commit: now.commit,
          filesChanged: now.filesChanged,
        },
      );
      let done: CheckpointRestored;
      try {
        done = CheckpointRestored.parse((await call(sessionId, CHECKPOINT_RESTORE_OP, input)).meta);
      } catch (err) {
        if (err instanceof CheckpointError && err.outcomeUnknown) return outcomeUnknown(deps, undo, err.message);
        await dropUndo(deps, undo);
        throw err;
      }
      return restored(deps, undo, done);
    },

    async beforeChange(sessionId) {
      await afters.get(sessionId);
      const turnId = await runningTurn(sessionId);
      if (!turnId) return;
      let made = befores.get(turnId);
      if (!made) {
        made = (async () => {
          if (await db.checkpoint.findFirst({ where: { sessionId, turnId, phase: "before" }, select: { id: true } }))
            return;
          await create(sessionId, turnId, "before");
        })().catch(async (err) => {
          // The change still runs: a checkpoint that failed must not stop the agent's work, but the person is told.
          befores.delete(turnId);
          log(`before-checkpoint of turn ${turnId} failed: ${(err as Error).message}`);
          await deps
            .publish(sessionId, {
              type: "notice",
              level: "warn",
              code: "checkpoint.failed",
              text: `No checkpoint was taken before this turn's changes: ${(err as Error).message}`,
            })
            .catch(() => undefined);
        });
        befores.set(turnId, made);
      }
      await made;
    },

    turnStarted(sessionId, turnId) {
      current.set(sessionId, turnId);
    },

    turnEnded(sessionId, turnId, published) {
      if (current.get(sessionId) === turnId) current.delete(sessionId);
      const pending = befores.get(turnId);
      befores.delete(turnId);
      const work = (async () => {
        await published?.catch(() => undefined);
        if (pending) await pending;
        try {
          if (!(await db.checkpoint.findFirst({ where: { sessionId, turnId, phase: "before" }, select: { id: true } })))
            return;
          await create(sessionId, turnId, "after");
        } catch (err) {
          log(`after-checkpoint of turn ${turnId} failed: ${(err as Error).message}`);
        }
      })();
      const previous = afters.get(sessionId);
      const chained = (previous ? previous.then(() => work) : work).finally(() => {
        if (afters.get(sessionId) === chained) afters.delete(sessionId);
      });
      afters.set(sessionId, chained);
      return chained;
    },

    async assertIdle(sessionId, what) {
      const running =
        deps.isRunning?.(sessionId) ||
        (await db.turn.findFirst({ where: { sessionId, status: "running" }, select: { id: true } }));
      if (running)
        throw new CheckpointError(
          "PRECONDITION_FAILED",
          `A turn is running in this session: ${what} until it ends. Stop it first, or wait for it to finish.`,
        );
    },
  };
  return service;
}
