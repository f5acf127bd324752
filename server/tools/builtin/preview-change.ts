// The approval card's preview of an edit_file, write_file or apply_patch: the runner works the change out
// with the op's own code and answers the diff, or why it could not be made (runner/files/preview.ts).
// After the change, the op answers the diff it applied (meta.diff), which its tool card shows.
import type { ExecResult } from "../../executors/contract";
import type { ApplyPatchInput, EditFileInput, WriteFileInput } from "../../protocol/file-ops";
import type { ChangePreview, ToolContext, ToolResult } from "../tool";

/**
 * The runner already cuts an applied diff at 20,000 characters; this bound holds against a runner
 * that does not, so one call never puts more than this into the event log. (A preview's diff is
 * the whole change, up to 4 MiB: the approval card clips it and stores the rest, card-change.ts.)
 */
const APPLIED_DIFF_MAX = 24_000;

/** A card waits this long for the diff before showing what the input alone says. */
const PREVIEW_TIMEOUT_MS = 5_000;

export async function previewChange(
  req:
    | { tool: "edit_file"; input: EditFileInput }
    | { tool: "write_file"; input: WriteFileInput }
    | { tool: "apply_patch"; input: ApplyPatchInput },
  ctx: ToolContext,
): Promise<ChangePreview | undefined> {
  const r = await ctx.remote(req, { op: "preview_change", timeoutMs: PREVIEW_TIMEOUT_MS });
  if (!r.ok) return undefined;
  return r.meta?.refused === true ? { problem: r.output } : { diff: r.output };
}

/** An edit's, write's or patch's result: the model's text and meta, and apart from them the applied diff. */
export function appliedResult(r: ExecResult): ToolResult {
  const { diff, ...meta } = r.meta ?? {};
  if (typeof diff !== "string") return { output: r.output, meta };
  if (diff.length <= APPLIED_DIFF_MAX) return { output: r.output, meta, diff };
  const kept = diff.slice(0, diff.lastIndexOf("\n", APPLIED_DIFF_MAX) + 1 || APPLIED_DIFF_MAX);
  return {
    output: r.output,
    meta,
    diff: `${kept}… diff cut: ${diff.length - kept.length} more characters not shown\n`,
  };
}
