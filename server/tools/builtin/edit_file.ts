// edit_file: replaces one exact occurrence of a text in a file the session has fully read (ledger-checked on the runner).
import { readFileSync } from "node:fs";
import { EditFileInput } from "../../protocol/file-ops";
import { respond } from "../errors";
import { defineTool } from "../tool";
import { gitPathsOf } from "../../policy/git-paths";
import { appliedResult, previewChange } from "./preview-change";

export const editFileTool = defineTool({
  name: "edit_file",
  description: readFileSync(new URL("./edit_file.txt", import.meta.url), "utf8").trim(),
  input: EditFileInput,
  capabilities: ["ReadsFiles", "WritesFiles"],
  executor: "runner",
  isReadOnly: () => false,
  // A file that steers git (`.git/…`, `HEAD`, `config`, `.gitattributes`) is never an ordinary edit.
  approvalFor: (i) => (gitPathsOf(i).length > 0 ? "required" : undefined),
  isConcurrencySafe: () => false,
  fieldAliases: {
    file_path: "path",
    old_str: "old_string",
    new_str: "new_string",
    old_text: "old_string",
    new_text: "new_string",
  },
  summarize: (i) => `Edit ${i.path}${i.replace_all ? " (all occurrences)" : ""}`,
  preview: (input, ctx) => previewChange({ tool: "edit_file", input }, ctx),
  async execute(input, ctx) {
    const r = await ctx.remote(input);
    if (!r.ok) throw respond(r.output, r.meta);
    return appliedResult(r);
  },
});
