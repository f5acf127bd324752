// search_text: ripgrep over the workspace (literal or regex), .gitignore honoured, bounded output.
import { readFileSync } from "node:fs";
import { SearchTextInput } from "../../protocol/file-ops";
import { respond } from "../errors";
import { defineTool } from "../tool";

export const searchTextTool = defineTool({
  name: "search_text",
  description: readFileSync(new URL("./search_text.txt", import.meta.url), "utf8").trim(),
  input: SearchTextInput,
  capabilities: ["ReadsFiles"],
  executor: "browser",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  fieldAliases: { query: "pattern", regexp: "pattern", include: "glob", file_pattern: "glob", directory: "path" },
  summarize: (i) => `Search ${i.regex ? "regex" : "text"} ${JSON.stringify(i.pattern)}${i.path ? ` in ${i.path}` : ""}`,
  async execute(input, ctx) {
    const r = await ctx.remote(input);
    if (!r.ok) throw respond(r.output, r.meta);
    return { output: r.output, meta: r.meta };
  },
});
