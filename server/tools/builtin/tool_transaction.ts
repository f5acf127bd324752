// tool_transaction: reads, edits and named checks in one call, applied all or nothing on the
// runner (runner/checks/transaction.ts journals each file's original before it is changed and
// puts every file back when a step fails, or when the runner restarts mid-transaction). One
// approval covers the whole transaction: its card shows every edit as a diff and the checks by name.
import { readFileSync } from "node:fs";
import { parsePatch } from "diff";
import { findCheck, isEditStep, TransactionInput, type TransactionStep } from "../../protocol/checks";
import { writtenPaths, gitPathsOf } from "../../policy/git-paths";
import { proposedChange } from "../../pipeline/card";
import { respond } from "../errors";
import { checkRuns } from "../checks-catalog";
import { defineTool, type ChangePreview, type ToolContext } from "../tool";
import { appliedResult, previewChange } from "./preview-change";
import { listChecks } from "./run_check";

const MARGIN_MS = 60_000;
const norm = (p: string) => p.replace(/^\.\//, "").replace(/^[ab]\//, "");

const input = (s: TransactionStep) => {
  const { op: _op, ...rest } = s as TransactionStep & Record<string, unknown>;
  return rest;
};

function pathsOf(s: TransactionStep): string[] {
  if (s.op === "apply_patch") {
    try {
      return parsePatch(s.patch)
        .flatMap((f) => [f.oldFileName, f.newFileName])
        .filter((n): n is string => !!n && n !== "/dev/null")
        .map(norm);
    } catch {
      return writtenPaths(s).map(norm);
    }
  }
  return s.op === "run_check" ? [] : [norm(s.path)];
}

function summary(steps: TransactionStep[]): string {
  const edits = [...new Set(steps.filter(isEditStep).flatMap(pathsOf))];
  const checks = steps.flatMap((s) => (s.op === "run_check" ? [s.name] : []));
  const changed = edits.length
    ? `edit ${edits.slice(0, 4).join(", ")}${edits.length > 4 ? ` and ${edits.length - 4} more` : ""}`
    : "read only";
  return `Transaction: ${changed}${checks.length ? `; then run check${checks.length === 1 ? "" : "s"} ${checks.join(", ")}` : ""}`;
}

/** Every edit as a diff: the runner's preview of a file's first change, the step's own text after. */
async function preview(steps: TransactionStep[], ctx: ToolContext): Promise<ChangePreview | undefined> {
  const seen = new Set<string>();
  // Read by a step of this transaction: the session's ledger does not know it yet (nothing runs
  // before approval), so the runner's refusal of it is not final.
  const readHere = new Set<string>();
  const parts: string[] = [];
  for (const [i, s] of steps.entries()) {
    if (s.op === "read_file") readHere.add(norm(s.path));
    if (s.op === "run_check" || s.op === "read_file") continue;
    const paths = pathsOf(s);
    const fresh = paths.every((p) => !seen.has(p));
    paths.forEach((p) => seen.add(p));
    let diff: string | undefined;
    if (fresh) {
      const r = await previewChange({ tool: s.op, input: input(s) } as Parameters<typeof previewChange>[0], ctx);
      if (r && "problem" in r && !paths.some((p) => readHere.has(p)))
        return { problem: `Step ${i + 1} (${s.op}) cannot be made: ${r.problem}` };
      if (r && "diff" in r) diff = r.diff;
    }
    diff ??= proposedChange(input(s));
    if (diff) parts.push(diff.endsWith("\n") ? diff : `${diff}\n`);
  }
  return { diff: parts.join("") };
}

export const toolTransactionTool = defineTool({
  name: "tool_transaction",
  description: readFileSync(new URL("./tool_transaction.txt", import.meta.url), "utf8").trim(),
  input: TransactionInput,
  capabilities: ["ReadsFiles", "WritesFiles", "ExecutesCode"],
  executor: "runner",
  isReadOnly: (i) => i.steps.every((s) => s.op === "read_file"),
  isConcurrencySafe: (i) => i.steps.every((s) => s.op === "read_file"),
  isDestructive: (i) => !i.steps.every((s) => s.op === "read_file"),
  approvalFor(i) {
    if (i.steps.some((s) => isEditStep(s) && gitPathsOf(input(s)).length > 0)) return "required";
    if (i.steps.every((s) => s.op === "read_file")) return "auto";
    // Edits alone are asked about as edits are; a check runs code, so the derived "required" stands.
    return i.steps.some((s) => s.op === "run_check") ? undefined : "suggest";
  },
  summarize: (i) => summary(i.steps),
  async validateInput(i, ctx) {
    if (!i.steps.some((s) => s.op === "run_check")) return undefined;
    const list = await listChecks(ctx);
    for (const [n, s] of i.steps.entries()) {
      if (s.op !== "run_check") continue;
      const found = findCheck(list, s.name);
      if (!found.ok) return `Step ${n + 1} (run_check): ${found.output}`;
    }
    return undefined;
  },
  preview: (i, ctx) => preview(i.steps, ctx),
  async execute(i, ctx) {
    let budget = MARGIN_MS;
    if (i.steps.some((s) => s.op === "run_check")) {
      const list = await listChecks(ctx);
      for (const s of i.steps)
        if (s.op === "run_check") budget += (findCheck(list, s.name) as { timeoutMs?: number }).timeoutMs ?? 0;
    }
    const r = await ctx.remote(i, { onProgress: (c) => ctx.progress(c), timeoutMs: budget });
    const ran = (r.meta?.checks ?? []) as { name: string; outcome: string }[];
    for (const c of ran) checkRuns.record(ctx.sessionId, c.name, { outcome: c.outcome, at: Date.now() });
    if (!r.ok) throw respond(r.output, r.meta);
    return appliedResult(r);
  },
});
