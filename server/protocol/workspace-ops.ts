// The runner's workspace operations (plain `request` frames with these op names and inputs):
// create, delete and measure a workspace of a runner started with `--root DIR` (runner/root/).
// A workspace id is a folder name under DIR, so its schema alone rules out `..`, `/`, dots,
// upper case and long names: nothing else ever turns an id into a path.
import { z } from "zod";

/** A workspace's id: also its folder name under the runner's root. */
export const WorkspaceId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, "a workspace id is 1-64 of a-z, 0-9 and '-', starting with a letter or digit");
export type WorkspaceId = z.infer<typeof WorkspaceId>;

export const WORKSPACE_CREATE_OP = "workspace.create";
export const WORKSPACE_DELETE_OP = "workspace.delete";
export const WORKSPACE_USAGE_OP = "workspace.usage";
/** Sets (or lifts, with null) a workspace's disk limit; kept by the runner across restarts. */
export const WORKSPACE_LIMIT_OP = "workspace.limit";

/** A workspace's disk limit in bytes (the org's setting; the default is 5 GB). */
const diskLimitBytes = z
  .number()
  .int()
  .min(1024 * 1024)
  .max(2 ** 50);

/**
 * Where a new workspace's files come from. `empty` is built into the runner; `git` and
 * `archive` are served by source handlers registered in runner/root/sources.ts (a runner
 * without one answers the create with an error naming the kind).
 */
export const WorkspaceSource = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("empty") }).strict(),
  z
    .object({
      kind: z.literal("git"),
      url: z.string().min(1).max(4096),
      branch: z.string().min(1).max(255).optional(),
      /** Names a credential the server holds; the secret itself never travels in this field. */
      credentialRef: z.string().min(1).max(200).optional(),
    })
    .strict(),
  z.object({ kind: z.literal("archive"), uploadId: z.string().min(1).max(200) }).strict(),
]);
export type WorkspaceSource = z.infer<typeof WorkspaceSource>;

export const WorkspaceCreateInput = z
  .object({
    workspaceId: WorkspaceId,
    source: WorkspaceSource,
    /** File ops past it are refused naming the limit, and a command that ends past it is told so (runner/workspace/disk-limit.ts). Absent: none. */
    diskLimitBytes: diskLimitBytes.optional(),
  })
  .strict();
export type WorkspaceCreateInput = z.infer<typeof WorkspaceCreateInput>;
export const WorkspaceDeleteInput = z.object({ workspaceId: WorkspaceId }).strict();
export type WorkspaceDeleteInput = z.infer<typeof WorkspaceDeleteInput>;
export const WorkspaceUsageInput = z.object({ workspaceId: WorkspaceId }).strict();
export type WorkspaceUsageInput = z.infer<typeof WorkspaceUsageInput>;
export const WorkspaceLimitInput = z
  .object({ workspaceId: WorkspaceId, diskLimitBytes: diskLimitBytes.nullable() })
  .strict();
export type WorkspaceLimitInput = z.infer<typeof WorkspaceLimitInput>;

/** One workspace as a runner reports it (hello, create, usage). */
export const WorkspaceEntry = z.object({
  id: WorkspaceId,
  bytesUsed: z.number().int().nonnegative(),
  /** The runner's `--workspace` folder adopted in place: the workspace of requests naming none; never deleted by the runner. */
  default: z.boolean().optional(),
});
export type WorkspaceEntry = z.infer<typeof WorkspaceEntry>;

/** The `output` of a successful workspace.create, workspace.usage or workspace.limit (JSON). */
export const WorkspaceUsageResult = WorkspaceEntry.extend({
  freeDiskBytes: z.number().int().nonnegative(),
  diskLimitBytes: z.number().int().positive().optional(),
});
export type WorkspaceUsageResult = z.infer<typeof WorkspaceUsageResult>;

/**
 * The `output` of a successful workspace.delete (JSON); `existed: false` when there was nothing
 * to delete; `stopped`: it was in use, and its commands, terminals and network were killed first.
 */
export const WorkspaceDeleteResult = z.object({ id: WorkspaceId, existed: z.boolean(), stopped: z.boolean() });
export type WorkspaceDeleteResult = z.infer<typeof WorkspaceDeleteResult>;
