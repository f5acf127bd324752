// A session's workspace disk usage against its limit (files.usage, the IDE's status bar): asked of
// the runner that holds the workspace (workspace.usage), which measures the folder and keeps the
// limit the org set (services/placement.ts sends it). A runner without `--root` measures nothing:
// the answer is then null, and the status bar shows no usage.
import { WORKSPACE_USAGE_OP, WorkspaceUsageResult } from "../protocol/workspace-ops";
import type { RunnerPool } from "../executors/runner-pool";
import { FileOpError } from "./files";

/** The id a `--root` runner gives its own `--workspace` folder (runner/root/workspaces.ts). */
const DEFAULT_WORKSPACE_ID = "default";

export interface WorkspaceUsage {
  usedBytes: number;
  /** null: this workspace has no limit (a runner's own `--workspace` folder). */
  limitBytes: number | null;
  /** Free on the runner's disk under its root. */
  freeDiskBytes: number;
}

export async function workspaceUsage(
  runners: Pick<RunnerPool, "place" | "runOn" | "unavailableReason">,
  sessionId: string,
): Promise<WorkspaceUsage | null> {
  const place = await runners.place(sessionId).catch((err: Error) => {
    throw new FileOpError("unavailable", err.message);
  });
  if (!place)
    throw new FileOpError(
      "unavailable",
      runners.unavailableReason(sessionId) ?? "this session has no workspace on a runner yet",
    );
  let result;
  try {
    result = await runners.runOn(
      place.runnerId,
      WORKSPACE_USAGE_OP,
      { workspaceId: place.workspaceId ?? DEFAULT_WORKSPACE_ID },
      15_000,
      place.workspaceId,
    );
  } catch (err) {
    throw new FileOpError("unavailable", (err as Error).message);
  }
  if (!result.ok) return null;
  const parsed = WorkspaceUsageResult.safeParse(JSON.parse(result.output));
  if (!parsed.success) return null;
  return {
    usedBytes: parsed.data.bytesUsed,
    limitBytes: parsed.data.diskLimitBytes ?? null,
    freeDiskBytes: parsed.data.freeDiskBytes,
  };
}
