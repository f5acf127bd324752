// The file operations a runner serves, keyed by op name (= tool name).
import type { OpTable } from "../ops";
import { editFileOp, writeFileOp } from "./edit";
import { gitDiffOp } from "./gitdiff";
import { listFilesOp } from "./list";
import { applyPatchOp } from "./patch";
import { personFileOps } from "./person";
import { previewChangeOp } from "./preview";
import { readFileOp } from "./read";
import { globOp, searchTextOp } from "./search";
import { gitRemoteOps } from "../workspace/git-remote-op";
import { checkpointOps, recordingPersonEdits } from "../checkpoints/ops";

export const fileOps: OpTable = {
  read_file: readFileOp,
  list_files: listFilesOp,
  search_text: searchTextOp,
  glob: globOp,
  edit_file: editFileOp,
  write_file: writeFileOp,
  apply_patch: applyPatchOp,
  git_diff: gitDiffOp,
  // What an edit or write would change, for its approval card (not a tool).
  preview_change: previewChangeOp,
  // The person's own IDE operations (not tools; never sent by the pipeline); their edits are
  // recorded so a checkpoint restore can keep them (checkpoints/person-edits.ts).
  ...recordingPersonEdits(personFileOps),
  // Checkpoints: snapshots in a shadow repository outside the workspace (runner/checkpoints/).
  ...checkpointOps,
  // Clone, fetch, pull, push with a credential the server adds (workspace/git-remote-op.ts).
  ...gitRemoteOps,
};
