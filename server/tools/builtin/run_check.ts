// run_check: runs a check the project declares in quiver.checks.json, by name — its exact argv,
// no shell, in the shell tool's sandbox (runner/checks/file.ts). Being a declared, committed
// command, the org policy can allow it while it asks for shell. Its catalog entry is made per
// session (tools/checks-catalog.ts): the names as an enum, each with its latest run.
import { readFileSync } from "node:fs";
import { ShellResultMeta } from "../../protocol/exec-ops";
import { ChecksListMeta, findCheck, RunCheckInput } from "../../protocol/checks";
import { respond } from "../errors";
import { checkRuns } from "../checks-catalog";
import { defineTool, type ToolContext, type ToolResult } from "../tool";
import { shellHeader } from "./shell";

const MARGIN_MS = 30_000;

/** The workspace's checks as the runner reads them now. */
export async function listChecks(ctx: ToolContext): Promise<ChecksListMeta> {
  const r = await ctx.remote({}, { op: "checks_list", timeoutMs: 10_000 });
  const parsed = ChecksListMeta.safeParse(r.meta);
  return parsed.success
    ? parsed.data
    : { ok: false, missing: false, error: r.output || "the runner gave no list of checks" };
}

/** One line for the description's "latest run". */
export function outcomeOf(m: ShellResultMeta): string {
  const secs = `${(m.durationMs / 1000).toFixed(1)} s`;
  if (m.stopReason === "timeout") return `timed out after ${secs}`;
  if (m.stopReason) return `${m.stopReason} after ${secs}`;
  return m.exitCode === 0 ? `passed (exit 0, ${secs})` : `failed (exit ${m.exitCode ?? m.signal ?? "?"}, ${secs})`;
}

export const runCheckTool = defineTool({
  name: "run_check",
  description: readFileSync(new URL("./run_check.txt", import.meta.url), "utf8").trim(),
  input: RunCheckInput,
  capabilities: ["ExecutesCode"],
  executor: "runner",
  isReadOnly: () => false,
  isConcurrencySafe: () => false,
  fieldAliases: { check: "name", check_name: "name" },
  summarize: (i) => `Run check ${i.name}`,
  async validateInput(input, ctx) {
    const found = findCheck(await listChecks(ctx), input.name);
    return found.ok ? undefined : found.output;
  },
  async execute(input, ctx): Promise<ToolResult> {
    const found = findCheck(await listChecks(ctx), input.name);
    if (!found.ok) throw respond(found.output);
    const r = await ctx.remote(input, {
      onProgress: (c) => ctx.progress(c),
      timeoutMs: found.timeoutMs + MARGIN_MS,
      stream: true,
    });
    if (!r.ok) throw respond(r.output, r.meta);
    const parsed = ShellResultMeta.safeParse(r.meta);
    if (!parsed.success) throw respond(`the runner answered without a command status: ${r.output.slice(0, 500)}`);
    const meta = parsed.data;
    checkRuns.record(ctx.sessionId, input.name, { outcome: outcomeOf(meta), at: Date.now() });
    const streamed = r.streamed && r.streamed.size > 0 ? r.streamed : undefined;
    const body = streamed ? undefined : r.output.length > 0 ? r.output : "(no output)";
    const head = `Check ${input.name} (${found.argv.join(" ")}): ${shellHeader(meta)}`;
    return {
      output: body === undefined ? head : `${head}\n${body}`,
      ...(streamed ? { stream: streamed } : {}),
      kind: "shell",
      isError: meta.exitCode !== 0 || meta.stopReason !== null,
      meta: { ...meta, check: input.name, argv: found.argv },
    };
  },
});
