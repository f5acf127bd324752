// tool_program's parts that are not the tool itself: the read-only operations a step may name,
// the paths a step's output matched (what `repeat` runs over), and each output's own cut, with
// its full bytes stored for retrieve_tool_result the way a single call's are.
import { planCut, renderCut, SHELL_LIMITS, type CutLimits } from "../../pipeline/truncate";
import { readQuotedName } from "../../protocol/listed-names";
import type { Tool, ToolContext } from "../tool";
import { gitDiffTool } from "./git_diff";
import { globTool } from "./glob";
import { listFilesTool } from "./list_files";
import { readFileTool } from "./read_file";
import { searchTextTool } from "./search_text";

/** The only operations a program can run: each read-only, none edits, runs code or reaches MCP. */
export const PROGRAM_OPS = ["read_file", "search_text", "list_files", "glob", "git_diff"] as const;
export type ProgramOp = (typeof PROGRAM_OPS)[number];

export const STEP_TOOLS: Readonly<Record<ProgramOp, Tool>> = {
  read_file: readFileTool,
  search_text: searchTextTool,
  list_files: listFilesTool,
  glob: globTool,
  git_diff: gitDiffTool,
};

/** Ops whose output names paths a later step can repeat over. */
export const LISTING_OPS: ReadonlySet<ProgramOp> = new Set(["search_text", "list_files", "glob", "git_diff"]);

/** Each output of a step is cut like a command's (30,000 bytes: 22K head, 8K tail). */
export const STEP_LIMITS: CutLimits = SHELL_LIMITS;
/** The whole program's text stays under the pipeline's own cut (100 KB), so step markers survive. */
export const PROGRAM_BUDGET = 90_000;
const MIN_SHARE = 2_000;

/** Distinct paths in a step's output, in order: search hits, listed files, changed files. */
export function matchedPaths(op: ProgramOp, output: string): string[] {
  const seen = new Set<string>();
  for (const line of output.split("\n")) {
    let path: string | undefined;
    // A name the runner quoted (listed-names.ts): a hit's or a listed file's, never a folder's.
    const quoted = op !== "git_diff" && line.startsWith('"') ? readQuotedName(line) : undefined;
    if (quoted) path = (op === "search_text" ? /^:\d+:/ : /^$/).test(quoted.rest) ? quoted.name : undefined;
    else if (op === "search_text") path = /^(.+?):\d+:/.exec(line)?.[1];
    else if (op === "git_diff") path = /^\+\+\+ b\/(.+)$/.exec(line)?.[1];
    else if (
      line &&
      !line.startsWith("[") &&
      !line.endsWith("/") &&
      line !== "No files match." &&
      line !== "(empty directory)"
    )
      path = line;
    if (path) seen.add(path);
  }
  return [...seen];
}

/** The context a step's tool runs with: the program's call, with the step's own op on the executor. */
export function stepContext(ctx: ToolContext, op: ProgramOp): ToolContext {
  return { ...ctx, remote: (input, opts = {}) => ctx.remote(input, { ...opts, op: opts.op ?? op }) };
}

/** Cuts one output to its share of what is left of the program's budget, storing the full bytes. */
export async function cutOutput(
  text: string,
  used: number,
  ctx: ToolContext,
): Promise<{ text: string; cut: boolean; ref?: string }> {
  const left = Math.max(MIN_SHARE, PROGRAM_BUDGET - used);
  const limits =
    left >= STEP_LIMITS.threshold
      ? STEP_LIMITS
      : { threshold: left, head: Math.floor(left * 0.73), tail: Math.floor(left * 0.27) };
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= limits.threshold) return { text, cut: false };
  let ref: string | undefined;
  try {
    ref = (await ctx.services.spills?.store?.(bytes, { toolCallId: ctx.callId }))?.ref;
  } catch {
    ref = undefined;
  }
  return { text: renderCut(bytes, planCut(bytes, limits), ref), cut: true, ref };
}
