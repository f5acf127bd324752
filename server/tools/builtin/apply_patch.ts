// apply_patch: applies a unified diff over one or more files, every hunk or none.
import { readFileSync } from "node:fs";
import { ApplyPatchInput } from "../../protocol/file-ops";
import { respond } from "../errors";
import { defineTool } from "../tool";
import { gitPathsOf } from "../../policy/git-paths";
import { appliedResult, previewChange } from "./preview-change";

/** "Patch a.ts, b.ts" from the +++ / --- headers. */
function patchSummary(patch: string): string {
  const names = new Set<string>();
  for (const m of patch.matchAll(/^(?:\+\+\+|---) (?:[ab]\/)?([^\t\n]+)/gm))
    if (m[1] !== "/dev/null") names.add(m[1].trim());
  const list = [...names];
  return `Patch ${list.slice(0, 3).join(", ")}${list.length > 3 ? ` and ${list.length - 3} more` : ""}`;
}

export const applyPatchTool = defineTool({
  name: "apply_patch",
  description: readFileSync(new URL("./apply_patch.txt", import.meta.url), "utf8").trim(),
  input: ApplyPatchInput,
  capabilities: ["ReadsFiles", "WritesFiles"],
  executor: "runner",
  isReadOnly: () => false,
  // A file that steers git (`.git/…`, `HEAD`, `config`, `.gitattributes`) is never an ordinary edit.
  approvalFor: (i) => (gitPathsOf(i).length > 0 ? "required" : undefined),
  isConcurrencySafe: () => false,
  fieldAliases: { diff: "patch" },
  summarize: (i) => patchSummary(i.patch),
  preview: (input, ctx) => previewChange({ tool: "apply_patch", input }, ctx),
  async execute(input, ctx) {
    const r = await ctx.remote(input);
    if (!r.ok) throw respond(r.output, r.meta);
    return appliedResult(r);
  },
});
