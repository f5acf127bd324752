// git_diff: the uncommitted changes this session made (or the whole workspace's) as a unified diff.
import { readFileSync } from "node:fs";
import { GitDiffInput } from "../../protocol/file-ops";
import { respond } from "../errors";
import { defineTool } from "../tool";

export const gitDiffTool = defineTool({
  name: "git_diff",
  description: readFileSync(new URL("./git_diff.txt", import.meta.url), "utf8").trim(),
  input: GitDiffInput,
  capabilities: ["ReadsFiles"],
  executor: "runner",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  fieldAliases: { file: "path", file_path: "path" },
  summarize: (i) =>
    `Diff ${i.path ?? (i.scope === "workspace" ? "workspace" : "session changes")}${i.stat ? " (stat)" : ""}`,
  async execute(input, ctx) {
    const r = await ctx.remote(input);
    if (!r.ok) throw respond(r.output, r.meta);
    return { output: r.output, meta: r.meta };
  },
});
