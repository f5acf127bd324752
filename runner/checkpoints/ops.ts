// The checkpoint ops (server/protocol/checkpoint-ops.ts) and the wrapper that records the
// person's own IDE edits. All of a workspace's checkpoint work runs one at a time (one shadow
// index); each session's commits are kept reachable under refs/quiver/<hash of its id>.
import { createHash } from "node:crypto";
import {
  CHECKPOINT_CREATE_OP,
  CHECKPOINT_DIFF_OP,
  CHECKPOINT_FORGET_OP,
  CHECKPOINT_HUNK_OP,
  CHECKPOINT_RESTORE_OP,
  CheckpointCreateInput,
  CheckpointDiffInput,
  CheckpointForgetInput,
  CheckpointHunkInput,
  CheckpointRestoreInput,
} from "../../server/protocol/checkpoint-ops";
import { readNoFollow, applyChange } from "../workspace/atomic";
import type { Workspace } from "../workspace/workspace";
import { defineOp, type AnyOp, type OpContext, type OpResult, type OpTable } from "../ops";
import { diffFiles } from "./diff";
import { dropSessionRef, pruneShadow } from "./forget";
import { packIfDue } from "./pack";
import { scoped } from "../log";
import { revertHunk } from "./hunk";
import { recordPersonEdits } from "./person-edits";
import { restoreTo } from "./restore";
import { ShadowError, ShadowRepo } from "./shadow";
import { changedPaths, commitTree, hasCommit, keyHead, leftOutOf, snapshotTree } from "./snapshot";

const log = scoped("checkpoints");
const shadows = new WeakMap<Workspace, ShadowRepo>();

export function shadowOf(workspace: Workspace): ShadowRepo {
  let s = shadows.get(workspace);
  if (!s) shadows.set(workspace, (s = ShadowRepo.open(workspace)));
  return s;
}

const refKey = (sessionId: string) => `s-${createHash("sha256").update(sessionId).digest("hex").slice(0, 24)}`;

/** Runs `work` on the workspace's shadow in turn; a shadow failure answers as a refusal naming it. */
async function onShadow(ctx: OpContext, work: (s: ShadowRepo) => Promise<OpResult>): Promise<OpResult> {
  try {
    const shadow = shadowOf(ctx.workspace);
    return await shadow.serial(() => work(shadow));
  } catch (err) {
    if (err instanceof ShadowError) return { ok: false, output: `checkpoint failed: ${err.message}` };
    throw err;
  }
}

async function missing(shadow: ShadowRepo, ...commits: (string | undefined)[]): Promise<OpResult | undefined> {
  for (const c of commits) {
    if (c && !(await hasCommit(shadow, c)))
      return {
        ok: false,
        output: `checkpoint ${c.slice(0, 10)} is not in this runner's shadow repository (${shadow.dir}); it was removed or made on another runner`,
      };
  }
  return undefined;
}

const createOp = defineOp({
  input: CheckpointCreateInput,
  run: (input, ctx) =>
    onShadow(ctx, async (shadow) => {
      // Each git below is a process (in the sandbox, two): the independent ones run side by
      // side, so a checkpoint after a few edits waits for five in a row instead of eight.
      const [parentKept, snap] = await Promise.all([
        input.parent ? hasCommit(shadow, input.parent) : false,
        snapshotTree(shadow),
      ]);
      const parent = parentKept ? input.parent : undefined;
      const [commit, changed] = await Promise.all([
        commitTree(shadow, snap.tree, parent, refKey(ctx.sessionId), leftOutOf(snap)),
        changedPaths(shadow, parent, snap.tree),
      ]);
      const filesChanged = changed.length;
      // After this answer, in the shadow's turn: the next operation waits for it, this one does not.
      void shadow
        .serial(() => packIfDue(shadow))
        .catch((err: Error) => log.warn(`packing ${shadow.dir} failed: ${err.message}`));
      const note = snap.skipped.length ? ` (${snap.skipped.length} file(s) over the size cap left out)` : "";
      return {
        ok: true,
        output: `checkpoint ${commit.slice(0, 10)}: ${filesChanged} file(s) changed${note}`,
        meta: { commit, filesChanged, skipped: snap.skipped.slice(0, 200) },
      };
    }),
});

const diffOp = defineOp({
  input: CheckpointDiffInput,
  run: (input, ctx) =>
    onShadow(ctx, async (shadow) => {
      const gone = await missing(shadow, input.from, input.to);
      if (gone) return gone;
      const r = await diffFiles(shadow, input.from, input.to, input.paths);
      return { ok: true, output: `${r.files.length} file(s) differ`, meta: r };
    }),
});

const restoreOp = defineOp({
  input: CheckpointRestoreInput,
  run: (input, ctx) =>
    onShadow(ctx, async (shadow) => {
      const gone = await missing(shadow, input.to);
      if (gone) return gone;
      const head = await keyHead(shadow, refKey(ctx.sessionId));
      const { paths, ...result } = await restoreTo(shadow, input, refKey(ctx.sessionId), head);
      if (paths.length) ctx.filesChanged(paths);
      const verb = input.dryRun ? "would change" : "restored";
      const failed = result.failed ?? [];
      // Still ok: the files changed before the failure are undone by undoCommit, which must reach the server.
      const not = failed.length
        ? `; ${failed.length} not restored: ${failed
            .slice(0, 20)
            .map((f) => `${f.path} (${f.reason})`)
            .join("; ")}`
        : "";
      return {
        ok: true,
        output: `${verb} ${result.changes.length - failed.length} file(s); kept ${result.kept.length} the person edited${not}`,
        meta: result,
      };
    }),
});

const hunkOp = defineOp({
  input: CheckpointHunkInput,
  run: (input, ctx) =>
    onShadow(ctx, async () => {
      const target = await ctx.workspace.resolve(input.path, "write");
      const before = target.exists ? await readNoFollow(ctx.workspace.files, target.rel).catch(() => null) : null;
      const conflict = (why: string) => ({
        ok: false,
        output: `CONFLICT: ${why}; nothing was changed`,
        meta: { conflict: true },
      });
      if (!before) return conflict(`${target.rel} is not a regular file now`);
      const text = before.data.toString("utf8");
      if (!Buffer.from(text, "utf8").equals(before.data)) return conflict(`${target.rel} is not UTF-8 text`);
      let next: string | null;
      try {
        next = revertHunk(text, input.newStart, input.lines);
      } catch (err) {
        return { ok: false, output: (err as Error).message };
      }
      if (next === null) return conflict(`${target.rel} no longer holds this hunk's lines (it changed since)`);
      await applyChange(ctx.workspace.files, target.rel, Buffer.from(next, "utf8"), before);
      ctx.filesChanged([target.rel]);
      return { ok: true, output: `reverted a hunk of ${target.rel}`, meta: { path: target.rel } };
    }),
});

/** A deleted session's checkpoints: its ref at once (in turn with other checkpoint work), then
 *  a prune of what nothing reaches, outside the turn so checkpoints meanwhile do not wait for it. */
const forgetOp = defineOp({
  input: CheckpointForgetInput,
  async run(_input, ctx) {
    let had = false;
    const dropped = await onShadow(ctx, async (shadow) => {
      had = await dropSessionRef(shadow, refKey(ctx.sessionId));
      return { ok: true, output: "" };
    });
    if (!dropped.ok) return dropped;
    if (!had) return { ok: true, output: "the session had no checkpoints on this runner" };
    try {
      await pruneShadow(shadowOf(ctx.workspace));
    } catch (err) {
      return { ok: false, output: `the session's checkpoints were let go but not pruned: ${(err as Error).message}` };
    }
    return { ok: true, output: "the session's checkpoints were removed" };
  },
});

export const checkpointOps: OpTable = {
  [CHECKPOINT_CREATE_OP]: createOp,
  [CHECKPOINT_FORGET_OP]: forgetOp,
  [CHECKPOINT_DIFF_OP]: diffOp,
  [CHECKPOINT_RESTORE_OP]: restoreOp,
  [CHECKPOINT_HUNK_OP]: hunkOp,
};

/** The paths an IDE op names in its input. */
function inputPaths(op: string, input: Record<string, unknown>): string[] {
  if (op === "ide_rename") return [input.from, input.to].filter((p): p is string => typeof p === "string");
  if (op === "ide_replace")
    return Array.isArray(input.paths) ? input.paths.filter((p): p is string => typeof p === "string") : [];
  return typeof input.path === "string" ? [input.path] : [];
}

const EDITS = new Set(["ide_write", "ide_write_bytes", "ide_mkdir", "ide_rename", "ide_delete", "ide_replace"]);

/** The person's file ops, each success recorded as the person's edit of what it named. */
export function recordingPersonEdits(table: OpTable): OpTable {
  return Object.fromEntries(
    Object.entries(table).map(([name, op]): [string, AnyOp] => {
      if (!EDITS.has(name)) return [name, op];
      return [
        name,
        {
          input: op.input,
          async run(input, ctx) {
            const rels = await Promise.all(
              inputPaths(name, input as Record<string, unknown>).map((p) =>
                ctx.workspace.resolve(p, "write").then(
                  (r) => r.rel,
                  () => null,
                ),
              ),
            );
            const result = await op.run(input, ctx);
            if (result.ok) {
              try {
                recordPersonEdits(
                  shadowOf(ctx.workspace).dir,
                  rels.filter((r): r is string => !!r),
                );
              } catch {
                /* no shadow folder (inside the workspace): nothing to keep for restores */
              }
            }
            return result;
          },
        },
      ];
    }),
  );
}
