// A file's diagnostics for the editor's markers (files.diagnostics): asked of the session's runner
// (ide_diagnostics), whose language server also gives them to the agent after its edits
// (runner/lsp). Only TS/JS files have any; `ready: false` when the server was not ready in time.
import { randomUUID } from "node:crypto";
import type { Executor } from "../executors/contract";
import { IDE_DIAGNOSTICS_OP, IdeDiagnosticsResult } from "../protocol/diagnostics";
import { FileOpError } from "./files";

const TIMEOUT_MS = 20_000;

export async function fileDiagnostics(
  runner: Pick<Executor, "run">,
  sessionId: string,
  path: string,
): Promise<IdeDiagnosticsResult> {
  let r;
  try {
    r = await runner.run({
      sessionId,
      callId: `ide_${randomUUID()}`,
      op: IDE_DIAGNOSTICS_OP,
      input: { path },
      deadline: Date.now() + TIMEOUT_MS,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    throw new FileOpError("unavailable", (err as Error).message);
  }
  if (!r.ok) throw new FileOpError(/does not exist|not found/i.test(r.output) ? "not_found" : "invalid", r.output);
  const parsed = IdeDiagnosticsResult.safeParse(JSON.parse(r.output));
  if (!parsed.success) throw new FileOpError("invalid", "the runner's diagnostics were not understood");
  return parsed.data;
}
