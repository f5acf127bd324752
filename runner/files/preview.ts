// preview_change: the unified diff an edit_file, write_file or apply_patch would make, worked
// out by the same code as the op (edit.ts, patch.ts), with nothing written. The approval card
// shows it, so the person sees the file's real line numbers and context; a change the op would
// refuse is refused here too. The whole change travels (up to PREVIEW_DIFF_MAX_CHARS): the card
// clips it and keeps the rest for "show the whole change".
import { PreviewChangeInput } from "../../server/protocol/file-ops";
import { defineOp, type OpContext, type OpResult } from "../ops";
import { changeDiff, PREVIEW_DIFF_MAX_CHARS } from "./change-diff";
import { planEdit, planWrite } from "./edit";
import { planPatch } from "./patch";

export const previewChangeOp = defineOp({
  input: PreviewChangeInput,
  async run(req, ctx) {
    try {
      return await preview(req, ctx);
    } catch (e) {
      // The op's own code threw on this input (a path through a link out of the workspace, an
      // absolute path elsewhere): the op would refuse the same way, so nobody is asked.
      return { ok: true, output: e instanceof Error ? e.message : String(e), meta: { refused: true } };
    }
  },
});

async function preview(req: PreviewChangeInput, ctx: OpContext): Promise<OpResult> {
  if (req.tool === "apply_patch") {
    const patch = await planPatch(req.input, ctx, PREVIEW_DIFF_MAX_CHARS);
    if (!patch.ok) return { ok: true, output: patch.output, meta: { refused: true } };
    return { ok: true, output: patch.diff, meta: { paths: patch.changes.map((c) => c.path.rel) } };
  }
  const plan = req.tool === "edit_file" ? await planEdit(req.input, ctx) : await planWrite(req.input, ctx);
  // A refusal is this op's answer, not its failure: ok:false stays for a runner that cannot
  // preview at all (an older one without this op), where the card falls back to the input.
  if (!plan.ok) return { ok: true, output: plan.output, meta: { refused: true } };
  const { target, before, updated } = plan;
  return {
    ok: true,
    output: changeDiff(target.rel, before, updated, PREVIEW_DIFF_MAX_CHARS),
    meta: { path: target.rel, created: before === null },
  };
}
