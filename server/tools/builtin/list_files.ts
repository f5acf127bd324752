// list_files: the workspace tree below a folder, .gitignore honoured, bounded. Read-only, so it may run in the page's WebContainer when that is in sync.
import { readFileSync } from "node:fs";
import { ListFilesInput } from "../../protocol/file-ops";
import { respond } from "../errors";
import { defineTool } from "../tool";

export const listFilesTool = defineTool({
  name: "list_files",
  description: readFileSync(new URL("./list_files.txt", import.meta.url), "utf8").trim(),
  input: ListFilesInput,
  capabilities: ["ReadsFiles"],
  executor: "browser",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  fieldAliases: { dir: "path", directory: "path", max_depth: "depth" },
  summarize: (i) => `List ${i.path ?? "."}${i.depth ? ` (depth ${i.depth})` : ""}`,
  async execute(input, ctx) {
    const r = await ctx.remote(input);
    if (!r.ok) throw respond(r.output, r.meta);
    return { output: r.output, meta: r.meta };
  },
});
