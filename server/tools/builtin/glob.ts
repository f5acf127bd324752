// glob: workspace files whose paths match a glob, .gitignore honoured, bounded.
import { readFileSync } from "node:fs";
import { GlobInput } from "../../protocol/file-ops";
import { respond } from "../errors";
import { defineTool } from "../tool";

export const globTool = defineTool({
  name: "glob",
  description: readFileSync(new URL("./glob.txt", import.meta.url), "utf8").trim(),
  input: GlobInput,
  capabilities: ["ReadsFiles"],
  executor: "browser",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  fieldAliases: { glob: "pattern", directory: "path" },
  summarize: (i) => `Find files ${i.pattern}${i.path ? ` in ${i.path}` : ""}`,
  async execute(input, ctx) {
    const r = await ctx.remote(input);
    if (!r.ok) throw respond(r.output, r.meta);
    return { output: r.output, meta: r.meta };
  },
});
