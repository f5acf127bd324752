// read_file: numbered lines of a workspace file, with offset/limit for large files. Runs on the
// runner, whose read ledger is what later lets edit_file and write_file change the file.
import { readFileSync } from "node:fs";
import { ReadFileInput } from "../../protocol/file-ops";
import { respond } from "../errors";
import { defineTool } from "../tool";

export const readFileTool = defineTool({
  name: "read_file",
  description: readFileSync(new URL("./read_file.txt", import.meta.url), "utf8").trim(),
  input: ReadFileInput,
  capabilities: ["ReadsFiles"],
  // Not "browser": the runner's ledger must see every read that an edit will rely on.
  executor: "runner",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  fieldAliases: { file_path: "path", filename: "path", start_line: "offset", lines: "limit" },
  summarize: (i) =>
    `Read ${i.path}${i.offset || i.limit ? ` (from line ${i.offset ?? 1}${i.limit ? `, ${i.limit} lines` : ""})` : ""}`,
  async execute(input, ctx) {
    const r = await ctx.remote(input);
    if (!r.ok) throw respond(r.output, r.meta);
    return { output: r.output, meta: r.meta };
  },
});
