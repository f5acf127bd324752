// write_file: creates a file, or overwrites one the session has fully read and that is unchanged since.
import { readFileSync } from "node:fs";
import { WriteFileInput } from "../../protocol/file-ops";
import { respond } from "../errors";
import { defineTool } from "../tool";
import { gitPathsOf } from "../../policy/git-paths";
import { appliedResult, previewChange } from "./preview-change";

export const writeFileTool = defineTool({
  name: "write_file",
  description: readFileSync(new URL("./write_file.txt", import.meta.url), "utf8").trim(),
  input: WriteFileInput,
  capabilities: ["ReadsFiles", "WritesFiles"],
  executor: "runner",
  isReadOnly: () => false,
  // A file that steers git (`.git/…`, `HEAD`, `config`, `.gitattributes`) is never an ordinary edit.
  approvalFor: (i) => (gitPathsOf(i).length > 0 ? "required" : undefined),
  isConcurrencySafe: () => false,
  fieldAliases: { file_path: "path", text: "content", contents: "content" },
  summarize: (i) => `Write ${i.path} (${i.content.length} characters)`,
  preview: (input, ctx) => previewChange({ tool: "write_file", input }, ctx),
  async execute(input, ctx) {
    const r = await ctx.remote(input);
    if (!r.ok) throw respond(r.output, r.meta);
    return appliedResult(r);
  },
});
