// What a deleted session leaves running on its runner: the commands its agent started and left
// in the background (a dev server, a watcher). Their handles belong to the session, so once it
// is gone nobody could poll or stop them but by hand in a terminal; they end with it. Terminals
// close on their own path (RunnerPool.unbind).
import { randomUUID } from "node:crypto";
import { SHELL_END_SESSION } from "../protocol/exec-ops";
import type { ExecRequest, ExecResult } from "../executors/contract";

const TIMEOUT_MS = 30_000;

export interface SessionRunners {
  run(request: ExecRequest): Promise<ExecResult>;
  runnerOf(sessionId: string): string | undefined;
  unbind(sessionId: string): void;
}

/**
 * Stops the session's commands on its runner, then forgets where it was. Only a session bound
 * here has a runner to ask: every session of a ready workspace is, once its runner connects to
 * this instance, and a lookup would make a workspace not yet made just to end nothing in it. A
 * failure (its runner away, or older) is reported, not thrown: a runner's restart ends them too.
 */
export async function endSessionCommands(
  runners: SessionRunners,
  sessionId: string,
  report: (message: string) => void,
): Promise<void> {
  if (!runners.runnerOf(sessionId)) return runners.unbind(sessionId);
  try {
    const r = await runners.run({
      sessionId,
      callId: `end_${randomUUID()}`,
      op: SHELL_END_SESSION,
      input: {},
      deadline: Date.now() + TIMEOUT_MS,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!r.ok) report(`deleted session ${sessionId}: its commands were not stopped: ${r.output}`);
  } catch (err) {
    report(`deleted session ${sessionId}: its commands were not stopped: ${(err as Error).message}`);
  } finally {
    runners.unbind(sessionId);
  }
}
