// The runner's check ops, beside `shell` in the exec extension: checks_list (the parsed
// quiver.checks.json, for run_check's schema), run_check and tool_transaction. A transaction
// journal left by a runner that died is rolled back first, before any of them runs.
import { z } from "zod";
import { RunCheckInput } from "../../server/protocol/checks";
import { defineOp, type OpTable, type RunnerHost } from "../ops";
import type { ShellService } from "../exec/shell";
import { checkNames, readChecks, runCheck } from "./file";
import { recoverJournal } from "./journal";
import { transactionOp } from "./transaction";

export function checkOps(host: RunnerHost, shell: ShellService, log: (line: string) => void): OpTable {
  const recovered = recoverJournal(host.workspace, log).catch((err: Error) =>
    log(`transaction journal: ${err.message}`),
  );
  const ready = () => recovered;
  return {
    checks_list: defineOp({
      input: z.object({}).strict(),
      async run(_input, ctx) {
        await ready();
        const list = await readChecks(ctx.workspace);
        return { ok: true, output: list.ok ? checkNames(list.checks).join(", ") : list.error, meta: list };
      },
    }),
    run_check: defineOp({
      input: RunCheckInput,
      async run(input, ctx) {
        await ready();
        return runCheck(shell, input.name, ctx);
      },
    }),
    tool_transaction: transactionOp(shell, ready),
  };
}
