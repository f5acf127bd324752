// The approval card's preview of an edit_file or write_file: the runner works the change out
// with the op's own code and answers the diff, or why it could not be made (runner/files/preview.ts).
import type { EditFileInput, WriteFileInput } from "../../protocol/file-ops";
import type { ChangePreview, ToolContext } from "../tool";

/** A card waits this long for the diff before showing what the input alone says. */
const PREVIEW_TIMEOUT_MS = 5_000;

export async function previewChange(
  req: { tool: "edit_file"; input: EditFileInput } | { tool: "write_file"; input: WriteFileInput },
  ctx: ToolContext,
): Promise<ChangePreview | undefined> {
  const r = await ctx.remote(req, { op: "preview_change", timeoutMs: PREVIEW_TIMEOUT_MS });
  if (!r.ok) return undefined;
  return r.meta?.refused === true ? { problem: r.output } : { diff: r.output };
}
