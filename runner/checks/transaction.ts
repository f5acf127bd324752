// tool_transaction on the runner: reads and edits in order, each through its own op (so the read
// ledger, atomic writes and the diff budget are exactly those of single calls), then the named
// checks; any failure puts every touched file back from the journal (journal.ts). Check names
// are looked up before anything is written, so an unknown one changes nothing.
import { isEditStep, TransactionInput, type TransactionStep } from "../../server/protocol/checks";
import { defineOp, type OpContext, type OpResult } from "../ops";
import { editFileOp, planEdit, planWrite, writeFileOp } from "../files/edit";
import { applyPatchOp, planPatch } from "../files/patch";
import { readFileOp } from "../files/read";
import type { ShellService } from "../exec/shell";
import { findCheck, readChecks, runCheck } from "./file";
import { Journal } from "./journal";

/** Each check's output in the transaction's answer: its head and, mostly, its tail. */
const CHECK_HEAD = 2_000;
const CHECK_TAIL = 10_000;

function bounded(text: string): string {
  if (text.length <= CHECK_HEAD + CHECK_TAIL) return text;
  return `${text.slice(0, CHECK_HEAD)}\n… ${text.length - CHECK_HEAD - CHECK_TAIL} characters omitted …\n${text.slice(-CHECK_TAIL)}`;
}

const label = (i: number, s: TransactionStep) =>
  `step ${i + 1} (${s.op}${s.op === "run_check" ? ` ${s.name}` : s.op === "apply_patch" ? "" : ` ${s.path}`})`;

/** The files an edit step would touch, or why it cannot be made (its own op's planner). */
async function touched(
  step: TransactionStep,
  ctx: OpContext,
): Promise<{ ok: true; rels: string[] } | { ok: false; output: string }> {
  const { op: _op, ...input } = step as TransactionStep & Record<string, unknown>;
  const plan =
    step.op === "edit_file"
      ? await planEdit(input as never, ctx)
      : step.op === "write_file"
        ? await planWrite(input as never, ctx)
        : await planPatch(input as never, ctx);
  if (!plan.ok) return plan;
  return { ok: true, rels: "changes" in plan ? plan.changes.map((c) => c.path.rel) : [plan.target.rel] };
}

function checkLine(r: OpResult): { passed: boolean; head: string } {
  const m = (r.meta ?? {}) as {
    exitCode?: number | null;
    signal?: string | null;
    stopReason?: string | null;
    durationMs?: number;
  };
  const secs = `${((m.durationMs ?? 0) / 1000).toFixed(1)} s`;
  if (!r.ok) return { passed: false, head: `could not run: ${r.output}` };
  if (m.stopReason === "timeout") return { passed: false, head: `timed out after ${secs}` };
  if (m.stopReason) return { passed: false, head: `${m.stopReason} after ${secs}` };
  if (m.exitCode !== 0)
    return { passed: false, head: `exit code ${m.exitCode ?? `signal ${m.signal ?? "unknown"}`} · ${secs}` };
  return { passed: true, head: `passed (exit code 0) · ${secs}` };
}

export function transactionOp(shell: ShellService, ready: () => Promise<unknown>) {
  return defineOp({
    input: TransactionInput,
    async run({ steps }, ctx): Promise<OpResult> {
      await ready();
      const checks = steps.some((s) => s.op === "run_check") ? await readChecks(ctx.workspace) : undefined;
      for (const [i, s] of steps.entries()) {
        if (s.op !== "run_check") continue;
        const found = findCheck(checks!, s.name);
        if (!found.ok)
          return { ok: false, output: `Transaction refused, nothing was changed: ${label(i, s)}: ${found.output}` };
      }
      const journal = new Journal(ctx.workspace, ctx.sessionId);
      const lines: string[] = [];
      const diffs: string[] = [];
      /** Each check that ran, for run_check's "latest run" (tools/checks-catalog.ts). */
      const ran: { name: string; outcome: string }[] = [];
      const fail = async (i: number, why: string, detail = ""): Promise<OpResult> => {
        let restored: string[];
        try {
          restored = await journal.rollback();
        } catch (err) {
          return {
            ok: false,
            output: `Transaction failed at ${label(i, steps[i])}: ${why}\nRestoring the files FAILED (${(err as Error).message}); the originals are kept in the runner's transaction journal and are restored when the runner restarts.`,
          };
        }
        const back =
          restored.length > 0 ? `Every file is back as it was: ${restored.join(", ")}.` : "No file had been changed.";
        return {
          ok: false,
          output: `Transaction rolled back: ${label(i, steps[i])} failed: ${why}\n${back}${lines.length ? `\nSteps before it:\n${lines.join("\n")}` : ""}${detail}`,
          meta: { failedStep: i + 1, restored, checks: ran },
        };
      };
      let at = 0;
      try {
        for (const [i, s] of steps.entries()) {
          at = i;
          if (s.op === "run_check") continue;
          const { op: _op, ...input } = s as TransactionStep & Record<string, unknown>;
          if (s.op === "read_file") {
            const r = await readFileOp.run(input as never, ctx);
            if (!r.ok) return await fail(i, r.output);
            lines.push(`#${i + 1} read_file ${s.path}:\n${r.output}`);
            continue;
          }
          if (!isEditStep(s)) continue;
          const plan = await touched(s, ctx);
          if (!plan.ok) return await fail(i, plan.output);
          const mark = await journal.remember(plan.rels);
          const op = s.op === "edit_file" ? editFileOp : s.op === "write_file" ? writeFileOp : applyPatchOp;
          let r: OpResult;
          try {
            r = await op.run(input as never, ctx);
          } catch (err) {
            return await fail(i, (err as Error).message);
          }
          if (!r.ok) {
            // A refused op writes nothing (a file changed since it was read, a patch that does not apply).
            journal.notApplied(mark);
            return await fail(i, r.output);
          }
          journal.wrote(plan.rels);
          if (typeof r.meta?.diff === "string") diffs.push(r.meta.diff);
          lines.push(`#${i + 1} ${s.op}: ${r.output.split("\n")[0]}`);
        }
        for (const [i, s] of steps.entries()) {
          if (s.op !== "run_check") continue;
          at = i;
          const r = await runCheck(shell, s.name, ctx, checks);
          const { passed, head } = checkLine(r);
          if (r.ok) ran.push({ name: s.name, outcome: head });
          if (!passed)
            return await fail(
              i,
              `check ${s.name} ${head}`,
              r.ok ? `\nOutput of ${s.name}:\n${bounded(r.output) || "(no output)"}` : "",
            );
          lines.push(`#${i + 1} run_check ${s.name}: ${head}`);
        }
      } catch (err) {
        return await fail(at, `the runner failed: ${(err as Error).message}`);
      }
      journal.commit();
      const edits = steps.filter(isEditStep).length;
      return {
        ok: true,
        output: `Transaction applied: ${edits} edit step${edits === 1 ? "" : "s"}${ran.length ? `, then ${ran.length} check${ran.length === 1 ? "" : "s"} passed` : ""}.\n${lines.join("\n")}`,
        meta: { paths: journal.paths, diff: diffs.join(""), checks: ran },
      };
    },
  });
}
