// The runner's checkpoint operations (plain `request` frames with these op names and inputs):
// snapshots of a workspace as commits of a shadow repository the runner keeps outside it
// (runner/checkpoints/), the diff between two of them (or one and the files as they are now),
// a restore to one, and the revert of one hunk. The server keeps which commit is which
// checkpoint (Checkpoint rows); the runner keeps the commits.
import { z } from "zod";

export const CHECKPOINT_CREATE_OP = "checkpoint.create";
export const CHECKPOINT_DIFF_OP = "checkpoint.diff";
export const CHECKPOINT_RESTORE_OP = "checkpoint.restore";
export const CHECKPOINT_HUNK_OP = "checkpoint.revert_hunk";
/** Sent when a session is deleted (never a tool): its commits are let go and pruned. */
export const CHECKPOINT_FORGET_OP = "checkpoint.forget_session";

/** A shadow commit's full hash: nothing else (no `HEAD~1`, no `--option`) reaches git as a revision. */
export const CommitId = z.string().regex(/^[0-9a-f]{40}$/, "a checkpoint commit is 40 lower-case hex digits");

/** A workspace-relative path as git prints it (forward slashes, no leading slash, no `..`). */
const RelPath = z
  .string()
  .min(1)
  .max(4096)
  .refine(
    (p) => !p.startsWith("/") && !p.split("/").some((c) => c === ".." || c === "." || c === "") && !p.includes("\0"),
    "a workspace-relative path",
  );

export const CheckpointForgetInput = z.object({}).strict();
export type CheckpointForgetInput = z.infer<typeof CheckpointForgetInput>;

export const CheckpointCreateInput = z.object({ parent: CommitId.optional() }).strict();
export type CheckpointCreateInput = z.infer<typeof CheckpointCreateInput>;

/** `meta` of checkpoint.create. */
export const CheckpointCreated = z.object({
  commit: CommitId,
  /** Files that differ from `parent` (all files when there is none). */
  filesChanged: z.number().int().nonnegative(),
  /** Files left out for their size (over the cap), as the person should be told. */
  skipped: z.array(z.object({ path: z.string(), size: z.number().int().nonnegative() })),
});
export type CheckpointCreated = z.infer<typeof CheckpointCreated>;

/** `to` omitted: the workspace as it is now. `paths`: only these. */
export const CheckpointDiffInput = z
  .object({ from: CommitId, to: CommitId.optional(), paths: z.array(RelPath).max(1000).optional() })
  .strict();
export type CheckpointDiffInput = z.infer<typeof CheckpointDiffInput>;

/** `meta` of checkpoint.diff; `output` is git's unified diff (-U3, no renames) of the text files. */
export const CheckpointDiffMeta = z.object({
  files: z.array(z.object({ path: z.string(), status: z.enum(["added", "modified", "deleted"]), binary: z.boolean() })),
  /** The diff text stopped at its limit; files past it have no hunks. */
  truncated: z.boolean(),
});
export type CheckpointDiffMeta = z.infer<typeof CheckpointDiffMeta>;

export const CheckpointRestoreInput = z
  .object({
    to: CommitId,
    dryRun: z.boolean(),
    /** Leave alone the files the person changed through the IDE after the checkpoint `to` was made. */
    keepPersonEdits: z.boolean(),
    /** Only these paths (a single file's restore); omitted: every file. */
    paths: z.array(RelPath).max(1000).optional(),
  })
  .strict();
export type CheckpointRestoreInput = z.infer<typeof CheckpointRestoreInput>;

export const RestoreChange = z.object({
  path: z.string(),
  change: z.enum(["restore", "delete", "recreate"]),
  added: z.number().int().nonnegative(),
  removed: z.number().int().nonnegative(),
});
export type RestoreChange = z.infer<typeof RestoreChange>;

/** `meta` of checkpoint.restore. */
export const CheckpointRestored = z.object({
  changes: z.array(RestoreChange),
  kept: z.array(z.string()),
  /** Not dry: the workspace just before the restore (restoring to it undoes this one). */
  undoCommit: CommitId.optional(),
  /** Not dry: paths that could not be written, with why (the rest was restored). */
  failed: z.array(z.object({ path: z.string(), reason: z.string() })).optional(),
});
export type CheckpointRestored = z.infer<typeof CheckpointRestored>;

/** One hunk to take back out of the file as it is now: `newLines` (where they are) become `oldLines`. */
export const CheckpointHunkInput = z
  .object({
    path: RelPath,
    /** 1-based line in the current file where the hunk's new side starts (searched near it when moved). */
    newStart: z.number().int().nonnegative(),
    /** The hunk's lines as git prints them: " ctx", "-old", "+new", "\\ No newline at end of file". */
    lines: z.array(z.string().max(1_000_000)).min(1).max(100_000),
  })
  .strict();
export type CheckpointHunkInput = z.infer<typeof CheckpointHunkInput>;

/** `meta` of a refused checkpoint.revert_hunk when the file no longer holds the hunk's lines. */
export const HunkConflict = z.object({ conflict: z.literal(true) });
