// tool_program: up to 8 read-only steps (read_file, search_text, list_files, glob, git_diff) in
// one call, so a look-around that would take the model several round trips takes one. Each step
// is checked, run and cut exactly as the single call would be (the step tool's own schema,
// validateInput and execute, on the runner, whose read ledger credits its reads for later
// edits); `repeat` runs a step over the paths an earlier step matched, `if_contains` runs it only
// when an earlier step's output has a text. The first failing step stops the program: the steps
// before it keep their results and the ones after are reported as not run.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { isFatalError, respond, toToolError } from "../errors";
import { defineTool, type ToolContext } from "../tool";
import {
  cutOutput,
  LISTING_OPS,
  matchedPaths,
  PROGRAM_OPS,
  stepContext,
  STEP_TOOLS,
  type ProgramOp,
} from "./program-steps";

export const MAX_STEPS = 8;
export const MAX_REPEAT = 10;
const DEFAULT_REPEAT = 5;
const CONTROL_KEYS = new Set(["op", "repeat", "if_contains"]);

const stepRef = z.number().int().min(1).max(MAX_STEPS);
const Step = z.looseObject({
  op: z
    .enum(PROGRAM_OPS)
    .describe(
      "The read-only operation; its arguments (path, pattern, offset, …) sit beside op, as in the single tool.",
    ),
  repeat: z
    .object({
      over: stepRef.describe(
        "An earlier step (1-based) of search_text, glob, list_files or git_diff: this step runs once per path it matched, with path set to it.",
      ),
      max: z
        .number()
        .int()
        .min(1)
        .max(MAX_REPEAT)
        .optional()
        .describe(`Most paths to run over (default ${DEFAULT_REPEAT}); the rest are listed, not run.`),
    })
    .optional(),
  if_contains: z
    .object({
      step: stepRef.describe("An earlier step (1-based)."),
      text: z.string().min(1).max(1000).describe("Run this step only if that step's output contains this exact text."),
    })
    .optional(),
});
type Step = z.infer<typeof Step>;

const input = z.object({
  steps: z
    .array(Step)
    .min(1)
    .max(
      MAX_STEPS,
      `a program has at most ${MAX_STEPS} steps; split the work into two tool_program calls (or call the tools one by one)`,
    )
    .describe(`1 to ${MAX_STEPS} steps, run in order.`),
});
type ProgramInput = z.infer<typeof input>;

export function stepArgs(step: Step, path?: string): Record<string, unknown> {
  const args = Object.fromEntries(Object.entries(step).filter(([k]) => !CONTROL_KEYS.has(k)));
  return path === undefined ? args : { ...args, path };
}

/** What is wrong with the program before anything runs, step by step; undefined when it may run. */
function checkProgram(program: ProgramInput): string | undefined {
  const problems: string[] = [];
  program.steps.forEach((step, i) => {
    const n = i + 1;
    for (const [what, ref] of [
      ["repeat.over", step.repeat?.over],
      ["if_contains.step", step.if_contains?.step],
    ] as const) {
      if (ref !== undefined && ref >= n)
        problems.push(`step ${n}: ${what} is ${ref}, but it must name an earlier step (1 to ${n - 1})`);
    }
    const over = step.repeat ? program.steps[step.repeat.over - 1] : undefined;
    if (over && !LISTING_OPS.has(over.op))
      problems.push(
        `step ${n}: repeat.over names step ${step.repeat!.over} (${over.op}), which matches no paths; repeat over a search_text, glob, list_files or git_diff step`,
      );
    // A repeated step's path comes from the matches, so its other arguments are checked with a stand-in.
    const parsed = STEP_TOOLS[step.op].parse(stepArgs(step, step.repeat ? "." : undefined));
    if (!parsed.ok) problems.push(`step ${n} (${step.op}): ${parsed.error}`);
  });
  return problems.length ? `The program was not run:\n- ${problems.join("\n- ")}` : undefined;
}

interface StepOutcome {
  status: "ok" | "failed" | "skipped" | "not_run";
  output: string;
}

async function runOne(op: ProgramOp, args: Record<string, unknown>, ctx: ToolContext): Promise<string> {
  const tool = STEP_TOOLS[op];
  const parsed = tool.parse(args);
  if (!parsed.ok) throw respond(parsed.error);
  const sctx = stepContext(ctx, op);
  const problem = await tool.validateInput(parsed.value, sctx);
  if (problem) throw respond(problem);
  const r = await tool.execute(parsed.value, sctx);
  if (r.isError) throw respond(r.output);
  return r.output;
}

function skipReason(step: Step, done: StepOutcome[]): string | undefined {
  const cond = step.if_contains;
  if (!cond) return undefined;
  const prior = done[cond.step - 1];
  if (prior.status !== "ok") return `step ${cond.step} did not run`;
  return prior.output.includes(cond.text)
    ? undefined
    : `step ${cond.step}'s output does not contain ${JSON.stringify(cond.text)}`;
}

export const toolProgramTool = defineTool({
  name: "tool_program",
  description: readFileSync(new URL("./tool_program.txt", import.meta.url), "utf8").trim(),
  input,
  capabilities: ["ReadsFiles"],
  // Not "browser": its reads must reach the runner's ledger, like read_file's.
  executor: "runner",
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  fieldAliases: { program: "steps", calls: "steps" },
  summarize: (i) => `Program: ${i.steps.map((s) => `${s.op}${s.repeat ? "×" : ""}`).join(", ")}`,
  validateInput: (i) => checkProgram(i),
  async execute(program, ctx) {
    const done: StepOutcome[] = [];
    const parts: string[] = [];
    let used = 0;
    let failed: { n: number; op: string; message: string } | undefined;
    for (const [i, step] of program.steps.entries()) {
      const n = i + 1;
      if (failed) {
        done.push({ status: "not_run", output: "" });
        parts.push(`### step ${n} · ${step.op} — not run (step ${failed.n} failed)`);
        continue;
      }
      const skip = skipReason(step, done);
      if (skip) {
        done.push({ status: "skipped", output: "" });
        parts.push(`### step ${n} · ${step.op} — skipped: ${skip}`);
        continue;
      }
      let targets: (string | undefined)[] = [undefined];
      if (step.repeat) {
        const over = program.steps[step.repeat.over - 1].op;
        const paths =
          done[step.repeat.over - 1].status === "ok" ? matchedPaths(over, done[step.repeat.over - 1].output) : [];
        const max = step.repeat.max ?? DEFAULT_REPEAT;
        targets = paths.slice(0, max);
        const rest = paths.slice(max);
        const note =
          paths.length === 0
            ? "no paths (it matched none)"
            : `${targets.length} of ${paths.length} paths${rest.length ? `; not run for: ${rest.join(", ")} (repeat.max is ${max})` : ""}`;
        parts.push(`### step ${n} · ${step.op} repeated over step ${step.repeat.over}: ${note}`);
      }
      const outputs: string[] = [];
      for (const [k, path] of targets.entries()) {
        const args = stepArgs(step, path);
        const label = `### step ${step.repeat ? `${n}.${k + 1}` : n} · ${step.op} ${JSON.stringify(args)}`;
        let output: string;
        try {
          output = await runOne(step.op, args, ctx);
        } catch (e) {
          if (isFatalError(e) || ctx.signal.aborted) throw e;
          failed = { n, op: step.op, message: toToolError(e).message };
          parts.push(`${label} — FAILED\n${failed.message}`);
          break;
        }
        outputs.push(output);
        const cut = await cutOutput(output, used, ctx);
        used += Buffer.byteLength(cut.text, "utf8");
        parts.push(`${label}\n${cut.text}`);
      }
      done.push({ status: failed ? "failed" : "ok", output: outputs.join("\n") });
    }
    const ran = done.filter((d) => d.status === "ok").length;
    const head = failed
      ? `Program stopped at step ${failed.n} (${failed.op}): ${failed.message.split("\n")[0]}. Steps before it kept their results; later steps were not run.`
      : `Program ran ${ran} of ${program.steps.length} steps${ran < program.steps.length ? " (the others were skipped)" : ""}.`;
    return {
      output: `${head}\n\n${parts.join("\n\n")}`,
      isError: failed !== undefined,
      meta: {
        steps: done.map((d, i) => ({ step: i + 1, op: program.steps[i].op, status: d.status })),
        ...(failed ? { failedStep: failed.n } : {}),
      },
    };
  },
});
